import type { ContactUpsertInput } from '#core/contacts/v1/schemas.ts';

export const EMAIL_DOMAIN = 'bench.example.com';
export const SEED_PREFIX = 'seed-';

export function seedEmail(n: number): string {
  return `${SEED_PREFIX}${n}@${EMAIL_DOMAIN}`;
}

export interface Workload {
  /** The next contact row: an existing (seeded) email or a brand-new one, interleaved at the configured ratio. */
  row(): ContactUpsertInput;
  /** `size` rows; existing emails are distinct within the batch, as a real import would send them. */
  batch(size: number): ContactUpsertInput[];
  /** How many rows so far named an existing email, and how many a new one. */
  counts(): { existing: number; fresh: number };
}

/**
 * The request mix. Existing emails are drawn at random from the seeded pool (so concurrent requests rarely touch the
 * same contact); new emails are unique per run and phase. Every row carries the same realistic set of fields, so the
 * update and insert paths both do their full work (tag union, custom merge, score).
 */
export function workload(opts: { phase: string; seedCount: number; existingRatio: number }): Workload {
  const run = `${opts.phase}-${Date.now().toString(36)}`;
  let n = 0;
  let existing = 0;
  let fresh = 0;

  const fields = (i: number, email: string): ContactUpsertInput => ({
    email,
    firstName: 'Ada',
    lastName: `Bench ${i % 1000}`,
    phone: `+1 555 01${String(i % 100).padStart(2, '0')}`,
    title: i % 2 ? 'Engineer' : 'Head of Growth',
    tags: ['bench', `wave-${i % 8}`],
    custom: { campaign: `c${i % 16}`, plan: 'trial' },
  });

  const isExisting = (i: number) => Math.floor((i + 1) * opts.existingRatio) > Math.floor(i * opts.existingRatio);
  const pick = () => Math.floor(Math.random() * opts.seedCount);

  return {
    row() {
      const i = n++;
      if (isExisting(i)) {
        existing++;
        return fields(i, seedEmail(pick()));
      }
      fresh++;
      return fields(i, `new-${run}-${i}@${EMAIL_DOMAIN}`);
    },
    batch(size) {
      const used = new Set<number>();
      const rows: ContactUpsertInput[] = [];
      for (let k = 0; k < size; k++) {
        const i = n++;
        if (isExisting(i)) {
          let s = pick();
          while (used.has(s)) s = pick();
          used.add(s);
          existing++;
          rows.push(fields(i, seedEmail(s)));
        } else {
          fresh++;
          rows.push(fields(i, `new-${run}-${i}@${EMAIL_DOMAIN}`));
        }
      }
      return rows;
    },
    counts: () => ({ existing, fresh }),
  };
}
