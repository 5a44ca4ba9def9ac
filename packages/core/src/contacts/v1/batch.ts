import type { Db } from '@leadwire/db';
import type { Actor } from '../../auth/actor.ts';
import { errors, issuesFromZod, toPublicError } from '../../errors.ts';
import { ContactUpsertInput } from './schemas.ts';
import { transact } from '../shared/transact.ts';
import type { UpsertOptions } from './options.ts';
import { type RowOutcome, upsertContactsInTx } from './upsert.ts';

export type BatchRow =
  | { index: number; ok: true; id: string; created: boolean; matchedBy: 'email' | 'domain_name' | null }
  | { index: number; ok: false; error: { error: string; code: string; issues?: { path: string; message: string }[] } };

/**
 * Up to 100 contacts in one transaction, under the same rules as a single upsert. A row that fails validation or a
 * rule is reported in its own result and never fails the rest.
 */
export async function batchUpsertContacts(
  db: Db,
  actor: Actor,
  rawRows: readonly unknown[],
  opts: UpsertOptions,
): Promise<{ results: BatchRow[]; created: number; updated: number; failed: number }> {
  const parsed = rawRows.map((raw) => ContactUpsertInput.safeParse(raw));
  const valid = parsed.flatMap((p, index) => (p.success ? [{ index, input: p.data }] : []));
  const outcomes: RowOutcome[] = valid.length
    ? await transact(db, (tx) =>
        upsertContactsInTx(
          tx,
          actor,
          valid.map((v) => v.input),
          opts,
        ),
      )
    : [];
  const byIndex = new Map(valid.map((v, n) => [v.index, outcomes[n]!]));
  const results = parsed.map((p, index): BatchRow => {
    if (!p.success) {
      const pub = toPublicError(errors.validation(issuesFromZod(p.error.issues)));
      const issues = pub.body.issues as { path: string; message: string }[];
      return {
        index,
        ok: false,
        error: {
          error: `Validation failed: ${issues.map((i) => `${i.path || '(row)'}: ${i.message}`).join('; ')}`,
          code: 'validation_failed',
          issues,
        },
      };
    }
    const o = byIndex.get(index)!;
    if (!o.ok) {
      const { error, code, issues } = toPublicError(o.error).body;
      return { index, ok: false, error: { error, code, ...(Array.isArray(issues) ? { issues } : {}) } };
    }
    return { index, ok: true, id: o.id, created: o.created, matchedBy: o.matchedBy };
  });
  return {
    results,
    created: results.filter((r) => r.ok && r.created).length,
    updated: results.filter((r) => r.ok && !r.created).length,
    failed: results.filter((r) => !r.ok).length,
  };
}
