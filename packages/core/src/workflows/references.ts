import { qb, sql, statement, type Db, type Statement } from '@leadwire/db';
import { normalizeDomain } from '../companies/domain.ts';
import { errors, type Issue } from '../errors.ts';
import { type ReferenceKind, type StepDefinition, STEPS } from './steps.ts';

/*
 * The records a workflow's steps name (a pipeline, a company) must be the organization's own when the workflow is
 * written: a foreign or unknown one would be accepted and then fail every run. Checked in the transaction that
 * writes the steps; a pipeline is share-locked, so it cannot be deleted between the check and the commit. Deleting
 * one later is allowed, and the runs say so (`not_found`), as they do for any record gone.
 */

interface Kind {
  /** The value as the lookup compares it, or null when it cannot name a record of this kind. */
  key(value: string): string | null;
  invalid: string;
  /** Answers the keys of `keys` the organization has. */
  found: Statement<{ orgId: string; keys: string[] }, { key: string }>;
  noun: string;
}

const KINDS: Record<ReferenceKind, Kind> = {
  pipeline: {
    // The schema took a UUID; PostgreSQL answers it in lower case.
    key: (v) => v.toLowerCase(),
    invalid: 'must be a pipeline id (UUID)',
    found: statement<{ orgId: string; keys: string[] }>()((p) =>
      qb
        .selectFrom('pipelines')
        .select((eb) => sql<string>`${eb.ref('id')}::text`.as('key'))
        .where('organization_id', '=', p.orgId)
        .where('id', '=', sql<string>`any(${p.keys}::uuid[])`)
        .forShare(),
    ),
    noun: 'pipeline',
  },
  company: {
    // The run finds the company the same way (automation/run.ts): by its normalised domain. Companies are never deleted.
    key: normalizeDomain,
    invalid: 'must be a company domain, e.g. example.com',
    found: statement<{ orgId: string; keys: string[] }>()((p) =>
      qb
        .selectFrom('companies')
        .select('domain as key')
        .where('organization_id', '=', p.orgId)
        .where('domain', '=', sql<string>`any(${p.keys}::text[])`),
    ),
    noun: 'company',
  },
};

interface Reference {
  index: number;
  field: string;
  action: string;
  kind: ReferenceKind;
  key: string;
}

const issueAt = (r: Pick<Reference, 'index' | 'field' | 'action'>, message: string): Issue & { index: number } => ({
  index: r.index,
  path: `steps.${r.index}.input.${r.field}`,
  message: `${r.action}: ${r.field} ${message}`,
});

/** Refuses (400, each step's field named) steps naming a record the organization does not have. */
export async function checkReferences(tx: Db, orgId: string, steps: readonly StepDefinition[]): Promise<void> {
  const issues: (Issue & { index: number })[] = [];
  const refs: Reference[] = [];
  steps.forEach((step, index) => {
    for (const [field, kind] of Object.entries(STEPS[step.action].references ?? {})) {
      const value = step.input[field];
      // Stored steps keep only the inputs they set; an optional one left out names nothing.
      if (typeof value !== 'string') continue;
      const key = KINDS[kind].key(value);
      if (key === null) issues.push(issueAt({ index, field, action: step.action }, KINDS[kind].invalid));
      else refs.push({ index, field, action: step.action, kind, key });
    }
  });
  for (const kind of Object.keys(KINDS) as ReferenceKind[]) {
    const wanted = refs.filter((r) => r.kind === kind);
    if (!wanted.length) continue;
    const rows = await tx.run(KINDS[kind].found, { orgId, keys: [...new Set(wanted.map((r) => r.key))] });
    const found = new Set(rows.map((r) => r.key));
    for (const r of wanted) if (!found.has(r.key)) issues.push(issueAt(r, `names no ${KINDS[kind].noun} of this organization (${r.key})`));
  }
  if (!issues.length) return;
  const ordered = issues.sort((x, y) => x.index - y.index).map(({ path, message }) => ({ path, message }));
  throw errors.validation(ordered, `Validation failed: ${ordered[0]!.path}: ${ordered[0]!.message}`);
}
