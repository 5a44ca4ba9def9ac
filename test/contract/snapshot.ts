/**
 * `npm run openapi:snapshot`: writes both OpenAPI documents, as the server serves them, to contract/ (the snapshots
 * `npm test` compares the served documents with), after printing what changed. It refuses to write, and says why,
 * when the CHANGELOG's Unreleased section does not name a change: on /v1 every change since the last release (the
 * released snapshot), on the internal document every change since its snapshot. `--release` also makes the /v1
 * snapshot the released one: run it when the Unreleased section becomes a release.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { buildInternalOpenApiDocument, buildV1OpenApiDocument } from '#core/openapi/documents.ts';
import { type ContractChange, contractChanges, unnamedChanges } from './check.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The base URL the snapshots are built with: any fixed one; the served documents differ only in it. */
export const SNAPSHOT_BASE_URL = 'http://localhost:3000/api';

export const SNAPSHOTS = {
  v1: join(ROOT, 'contract', 'openapi-v1.json'),
  internal: join(ROOT, 'contract', 'openapi-internal.json'),
  /** /v1 as of the last release: every change since then must be named in the CHANGELOG's Unreleased section. */
  v1Released: join(ROOT, 'contract', 'openapi-v1.released.json'),
};
export const CHANGELOG = join(ROOT, 'CHANGELOG.md');

/**
 * A document as the snapshot holds it: two-space JSON, one value a line, so that a review reads its diff, with every
 * object's keys sorted. The order of keys means nothing in JSON, and it differs between a build under Node and one
 * under vitest (zod lays out a schema's `description` and `pattern` in the order its modules were first loaded).
 */
export const serialize = (doc: unknown) => `${JSON.stringify(sortKeys(doc), null, 2)}\n`;

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
  );
}

export function builtDocuments() {
  return { v1: buildV1OpenApiDocument(SNAPSHOT_BASE_URL), internal: buildInternalOpenApiDocument(SNAPSHOT_BASE_URL) };
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

export interface SnapshotPlan {
  /** What changed since each snapshot, for the reader. */
  changes: { v1: ContractChange[]; internal: ContractChange[] };
  /** The changes the CHANGELOG must name and does not: writing is refused while there is any. */
  unnamed: string[];
}

/** What writing the snapshots would change, and what the CHANGELOG does not yet name. */
export function planSnapshot(
  built: { v1: unknown; internal: unknown },
  current: { v1: unknown; internal: unknown; v1Released: unknown },
  changelog: string,
): SnapshotPlan {
  const changes = { v1: contractChanges(current.v1, built.v1), internal: contractChanges(current.internal, built.internal) };
  // Between releases the two /v1 snapshots are often the same: one diff then serves both.
  const sinceRelease = isDeepStrictEqual(current.v1Released, current.v1) ? changes.v1 : contractChanges(current.v1Released, built.v1);
  const unnamed = [
    ...unnamedChanges(sinceRelease, changelog).map((l) => `/v1 ${l}`),
    ...unnamedChanges(changes.internal, changelog).map((l) => `internal ${l}`),
  ];
  return { changes, unnamed };
}

function main(argv: string[]) {
  const built = builtDocuments();
  const first = !existsSync(SNAPSHOTS.v1);
  const current = first
    ? { v1: built.v1, internal: built.internal, v1Released: built.v1 }
    : { v1: readJson(SNAPSHOTS.v1), internal: readJson(SNAPSHOTS.internal), v1Released: readJson(SNAPSHOTS.v1Released) };
  const plan = planSnapshot(built, current, readFileSync(CHANGELOG, 'utf8'));
  for (const [name, list] of Object.entries(plan.changes)) {
    console.log(`${name}: ${list.length ? `${list.length} changes` : 'no change a client can notice (descriptions and examples aside)'}`);
    for (const c of list) console.log(`  ${c.kind}: ${c.where}: ${c.description}`);
  }
  if (plan.unnamed.length) {
    console.error(
      `Not written: the CHANGELOG's Unreleased section does not name these changes (docs/versioning.md):\n${plan.unnamed.map((l) => `  ${l}`).join('\n')}`,
    );
    return 1;
  }
  const written = [SNAPSHOTS.v1, SNAPSHOTS.internal];
  writeFileSync(SNAPSHOTS.v1, serialize(built.v1));
  writeFileSync(SNAPSHOTS.internal, serialize(built.internal));
  if (first || argv.includes('--release')) {
    writeFileSync(SNAPSHOTS.v1Released, serialize(built.v1));
    written.push(SNAPSHOTS.v1Released);
  }
  console.log(`written: ${written.join(', ')}`);
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
