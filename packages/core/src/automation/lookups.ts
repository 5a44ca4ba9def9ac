import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { toAppContact } from '../contacts/app/row.ts';
import type { AppContact } from '../contacts/app/schemas.ts';
import { listPipelines } from '../pipelines/service.ts';
import type { PipelineView } from '../pipelines/schemas.ts';
import type { z } from 'zod';
import { type CompanyChoices, TAG_CHOICES_MAX, type TagChoices } from './lookup-schemas.ts';
import * as q from './lookup-sql.ts';

/** How many live contacts the tag dropdown looks through: bounds its cost in a large workspace. */
const TAG_SCAN_CONTACTS = 10_000;

/**
 * The search half of find-or-create: the live contact with exactly this email (already trimmed and lowercased by the
 * input, as emails are stored), as a list of 0 or 1 contacts in the actions' contact shape. Nothing found is an empty
 * list, not 404: a platform's search step reads 404 as a failure, not as "create it".
 */
export async function findContact(db: Db, actor: InternalActor, email: string): Promise<AppContact[]> {
  const rows = await db.run(q.LIVE_CONTACT_WITH_EMAIL, { orgId: actor.orgId, email });
  return rows.map(toAppContact);
}

export async function pipelineChoices(db: Db, actor: InternalActor): Promise<PipelineView[]> {
  return (await listPipelines(db, actor)).items;
}

export async function tagChoices(db: Db, actor: InternalActor): Promise<z.infer<typeof TagChoices>> {
  const rows = await db.run(q.TAG_CHOICES, { orgId: actor.orgId, scan: TAG_SCAN_CONTACTS, limit: TAG_CHOICES_MAX });
  return rows.map((r) => ({ id: r.name, name: r.name, contacts: r.contacts }));
}

export async function companyChoices(
  db: Db,
  actor: InternalActor,
  input: { after?: string | undefined; limit: number },
): Promise<z.infer<typeof CompanyChoices>> {
  // '' sorts before every domain: the first page.
  const rows = await db.run(q.COMPANY_CHOICES, { orgId: actor.orgId, after: input.after ?? '', limit: input.limit });
  return rows.map((r) => ({ id: r.id, domain: r.domain, name: r.name, label: r.name ? `${r.name} (${r.domain})` : r.domain }));
}
