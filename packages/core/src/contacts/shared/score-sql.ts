import { type Expression, sql } from '@leadwire/db';
import {
  BOOKING_BONUS,
  MAX_ADJUSTMENT,
  MAX_SCORE,
  MIN_SCORE,
  SOURCE_BONUS,
  WEIGHT_COMPANY,
  WEIGHT_EMAIL,
  WEIGHT_JOB_TITLE,
  WEIGHT_PHONE,
  WEIGHT_WEB_PRESENCE,
} from '../../scoring/score.ts';

/*
 * Upsert rule 4 and the lead score as SQL expressions, for the single upsert that merges into the stored contact inside
 * its one statement (contacts/v1/one-trip.ts). They say what apply.ts and scoring/score.ts say, built from the same
 * constants; test/api/one-trip-merge.test.ts holds the two to the same answers on random contacts and requests.
 * Where SQL could not say exactly what JavaScript does (case folding beyond ASCII, which depends on the database's
 * locale), the statement does not merge: `asciiOnly` tells it to leave the contact to the TypeScript path.
 */

/**
 * What `String.prototype.trim` removes: ECMAScript's WhiteSpace and LineTerminator code points. PostgreSQL's `btrim`
 * without a set removes spaces only.
 */
const JS_WHITESPACE =
  '\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** ASCII letters to lower case, nothing else: `toLowerCase` on ASCII text, whatever the database's locale. */
export const lowerAscii = (x: Expression<string | null>) =>
  sql<string>`translate(${x}, ${sql.lit(UPPER)}, ${sql.lit(UPPER.toLowerCase())})`;

/** True when the text (or every element of the array) is ASCII: one byte per character in UTF-8. */
export const asciiOnly = (x: Expression<string | null>) => sql<boolean>`(octet_length(${x}) = char_length(${x}))`;
export const asciiArray = (x: Expression<string[] | null>) =>
  sql<boolean>`(octet_length(array_to_string(${x}, '')) = char_length(array_to_string(${x}, '')))`;

/** `present()` of scoring/score.ts: a string with something left after trimming. */
const present = (x: Expression<string | null>) => sql<boolean>`(coalesce(btrim(${x}, ${sql.lit(JS_WHITESPACE)}), '') <> '')`;

const clamp = (x: Expression<number>, min: number, max: number) => sql<number>`least(${sql.lit(max)}, greatest(${sql.lit(min)}, ${x}))`;

/** The source's bonus (an ASCII source: the statement leaves any other to the TypeScript path). */
function sourceBonus(source: Expression<string | null>, hasBooking: Expression<boolean>) {
  const key = lowerAscii(sql<string>`btrim(${source}, ${sql.lit(JS_WHITESPACE)})`);
  const cases = [...SOURCE_BONUS].map(([name, bonus]) => sql`when ${sql.lit(name)} then ${sql.lit(bonus)}`);
  const fromSource = sql<number>`(case ${key} ${sql.join(cases, sql` `)} else 0 end)`;
  return sql<number>`(case when ${hasBooking} then greatest(${fromSource}, ${sql.lit(BOOKING_BONUS)}) else ${fromSource} end)`;
}

export interface ScoreInputsSql {
  email: Expression<string | null>;
  phone: Expression<string | null>;
  companyId: Expression<string | null>;
  jobTitle: Expression<string | null>;
  website: Expression<string | null>;
  linkedin: Expression<string | null>;
  source: Expression<string | null>;
  hasBooking: Expression<boolean>;
  adjustment: Expression<number>;
  override: Expression<number | null>;
}

const weight = (on: Expression<boolean>, points: number) => sql<number>`(case when ${on} then ${sql.lit(points)} else 0 end)`;

/** `finalScore(baseScore(...), adjustment, override)` of scoring/score.ts. */
export function scoreSql(i: ScoreInputsSql) {
  const base = clamp(
    sql<number>`(${weight(present(i.email), WEIGHT_EMAIL)} + ${weight(present(i.phone), WEIGHT_PHONE)} + ${weight(
      sql<boolean>`(${i.companyId} is not null)`,
      WEIGHT_COMPANY,
    )} + ${weight(present(i.jobTitle), WEIGHT_JOB_TITLE)} + ${weight(
      sql<boolean>`(${present(i.website)} or ${present(i.linkedin)})`,
      WEIGHT_WEB_PRESENCE,
    )} + ${sourceBonus(i.source, i.hasBooking)})`,
    MIN_SCORE,
    MAX_SCORE,
  );
  const adjusted = clamp(sql<number>`(${base} + ${clamp(i.adjustment, -MAX_ADJUSTMENT, MAX_ADJUSTMENT)})`, MIN_SCORE, MAX_SCORE);
  return sql<number>`(case when ${i.override} is not null then ${clamp(i.override as Expression<number>, MIN_SCORE, MAX_SCORE)} else ${adjusted} end)`;
}

/**
 * `unionTags(stored, sent)` of apply.ts for ASCII tags: the stored tags, then each sent tag no stored one equals
 * ignoring case. `sent` arrives de-duplicated (first spelling kept) with its lower-cased forms beside it.
 */
export function unionTagsSql(stored: Expression<string[]>, sent: Expression<string[]>, sentLower: Expression<string[]>) {
  return sql<string[]>`(${stored} || array(select s.t from unnest(${sent}, ${sentLower}) with ordinality as s(t, l, n)
    where not exists (select 1 from unnest(${stored}) as e(t) where ${lowerAscii(sql.ref('e.t'))} = s.l) order by s.n))`;
}

/** `mergeCustom(stored, sent)` of apply.ts: key by key, a key sent as null removed. */
export function mergeCustomSql(stored: Expression<Record<string, unknown>>, sent: Expression<string>) {
  return sql<
    Record<string, unknown>
  >`((${stored} || ${sent}::jsonb) - array(select e.key from jsonb_each(${sent}::jsonb) as e where e.value = 'null'::jsonb))`;
}
