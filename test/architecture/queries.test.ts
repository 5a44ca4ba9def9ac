import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { productionSources } from './folders.ts';

/*
 * One query idiom (docs/architecture.md, "Adding a query"): a statement built once with `statement()` and run with `db.run`. A query
 * built per call (`db.query`) only where its SQL text must change with the input, and SQL as written (`db.raw`) only
 * for SQL that is not ours: each such place is listed here with its reason, so a new one is a decision, not a habit.
 * Matched by name (`db.` or `tx.` before the call, as services name their `Db`), in the server's production sources.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `db.query(builder)`: the shape varies per call. */
const PER_CALL: Record<string, string> = {
  'packages/core/src/contacts/app/list.ts': 'the contact list: its sort column and direction and any of five filters shape the text',
};
/** `db.raw(text)`: SQL that is not ours. */
const RAW: Record<string, string> = {
  'packages/core/src/jobs/boss.ts': "pg-boss's own statements, run in the caller's transaction",
  'packages/core/src/metrics/collect.ts': "the queue lag, read from pg-boss's tables (no entity describes them)",
};

const callers = (pattern: RegExp) =>
  ['packages/core/src', 'apps/server/src']
    .flatMap(productionSources)
    .filter((file) => pattern.test(readFileSync(path.join(ROOT, file), 'utf8')))
    .sort();

describe('one query idiom', () => {
  it('builds a query per call only where its shape varies (db.query)', () => {
    expect(callers(/\b(?:db|tx)\.query\(/)).toEqual(Object.keys(PER_CALL).sort());
  });

  it('runs SQL as written only where it is not ours (db.raw)', () => {
    expect(callers(/\b(?:db|tx)\.raw\(/)).toEqual(Object.keys(RAW).sort());
  });

  it('runs statements built once everywhere else (db.run)', () => {
    // The scan sees the tree (a wrong root would find nothing and pass the two above on an empty list).
    expect(callers(/\b(?:db|tx)\.run\(/).length).toBeGreaterThan(60);
  });
});
