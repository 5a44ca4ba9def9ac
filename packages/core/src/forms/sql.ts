import { columnList } from '@leadwire/db';
import { afterCursor } from '../records/pagination.ts';

/** The columns of a form, listed once; every statement and the row type derive from this list. */
export const FORM_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'fields',
  'published',
  'pipeline_id',
  'captcha_provider',
  'captcha_site_key',
  'captcha_secret',
  'thank_you_message',
  'redirect_url',
  'created_at',
  'updated_at',
] as const;

const COLS = columnList([...FORM_COLUMNS]);
const F_COLS = columnList([...FORM_COLUMNS], 'f');

export const GET_FORM = `select ${COLS} from forms where id = ? and organization_id = ?`;
export const LOCK_FORM = `${GET_FORM} for update`;
export const LIST_FORMS = `
select ${F_COLS} from forms f
where f.organization_id = ? and ${afterCursor('f', 'forms')}
order by f.created_at desc, f.id desc limit ?`;
export const INSERT_FORM = `
insert into forms (${COLS}) values (?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?, ?)
returning ${COLS}`;
export const UPDATE_FORM = `
update forms set name = ?, fields = ?::jsonb, published = ?, pipeline_id = ?, captcha_provider = ?, captcha_site_key = ?,
  captcha_secret = ?, thank_you_message = ?, redirect_url = ?, updated_at = ?
where id = ? returning ${COLS}`;
export const DELETE_FORM = `delete from forms where id = ? and organization_id = ? returning id`;
/** A pipeline a form may name: one of the organization's own. */
export const PIPELINE_OF_ORG = `select id from pipelines where id = ? and organization_id = ? for share`;

/** A published form and what intake needs of its organization (plan and cap), for an anonymous submitter. */
export const PUBLISHED_FORM = `
select ${F_COLS}, o.plan, o.contact_booster from forms f join organizations o on o.id = f.organization_id
where f.id = ? and f.published`;

/** The chosen pipeline (the form's, or the router's pick), else the organization's default: its id and first stage. */
export const ROUTE_PIPELINE = `
select p.id as pipeline_id,
  (select s.id from pipeline_stages s where s.pipeline_id = p.id order by s.position, s.id limit 1) as stage_id
from pipelines p
where p.organization_id = ? and (p.id = ?::uuid or p.is_default)
order by (p.id = ?::uuid) desc nulls last
limit 1`;

export const INSERT_SUBMISSION = `
insert into form_submissions (id, organization_id, form_id, form_name, contact_id, answers, attribution, pipeline_item_id, created_at)
values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?)`;

/** Fixed one-minute windows in the shared counters table (the hourly cleanup removes spent ones). */
export const COUNT_HIT = `
insert into rate_limit_counters (bucket, window_start, count) values (?, ?::timestamptz, 1), (?, ?::timestamptz, 1)
on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
returning bucket, count`;
