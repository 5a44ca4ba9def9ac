/**
 * The /v1 contract never breaks silently. Both documents the server serves (test/api/openapi.test.ts holds the served
 * ones equal to these builds) must equal their committed snapshots in contract/, and every change to /v1 since the
 * last release must be named in the CHANGELOG's Unreleased section, a breaking one in a **Breaking** entry. The
 * changes are found and classified by api-smart-diff (test/contract/check.ts); docs/versioning.md has the policy.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { contractChanges, isNamed, unnamedChanges, unreleasedEntries } from './check.ts';
import { builtDocuments, CHANGELOG, planSnapshot, SNAPSHOTS, serialize } from './snapshot.ts';

type Json = any;
let built: { v1: Json; internal: Json };
const read = (file: string) => readFileSync(file, 'utf8');

beforeAll(() => {
  built = builtDocuments();
});

describe('the OpenAPI snapshots', () => {
  it.each(['v1', 'internal'] as const)('the served %s document is its committed snapshot', (name) => {
    const snapshot = read(SNAPSHOTS[name]);
    if (snapshot === serialize(built[name])) return;
    // Only on a difference: say what changed, as the snapshot script would.
    const changes = contractChanges(JSON.parse(snapshot), built[name]).map((c) => `${c.kind}: ${c.where}: ${c.description}`);
    expect.fail(
      `contract/${name} is out of date: run \`npm run openapi:snapshot\` and name each change in CHANGELOG.md (docs/versioning.md).\n` +
        `${changes.slice(0, 30).join('\n') || '(descriptions or examples only)'}`,
    );
  });

  it('every /v1 change since the last release is named in the CHANGELOG, a breaking one as **Breaking**', () => {
    const released = read(SNAPSHOTS.v1Released);
    const snapshot = read(SNAPSHOTS.v1);
    if (released === snapshot) return;
    expect(unnamedChanges(contractChanges(JSON.parse(released), JSON.parse(snapshot)), read(CHANGELOG))).toEqual([]);
  });
});

/** The v1 document with one of each breaking change the policy names. */
function brokenV1(v1: Json): Json {
  const b = structuredClone(v1);
  delete b.paths['/companies/{id}'].get; // a removed operation
  delete b.components.schemas.ContactRecord.properties.jobTitle; // a removed field
  b.components.schemas.FeedEvent.properties.event.enum = b.components.schemas.FeedEvent.properties.event.enum.filter(
    (e: string) => e !== 'deal.lost',
  ); // a removed enum value
  delete b.paths['/contacts/search'].get.responses['404']; // a removed status
  b.paths['/contacts'].get.parameters.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } }); // a new required input
  b.paths['/events'].get.parameters.find((p: Json) => p.name === 'limit').schema.maximum = 50; // a narrowed range
  b.paths['/contacts'].get.parameters.find((p: Json) => p.name === 'cursor').schema.type = 'integer'; // a narrowed type
  return b;
}

describe('the check on a deliberately breaking edit', () => {
  let changes: ReturnType<typeof contractChanges>;
  beforeAll(() => {
    changes = contractChanges(built.v1, brokenV1(built.v1));
  });

  it('finds each breaking change, and the real CHANGELOG names none of them', () => {
    const breaking = changes.filter((c) => c.kind === 'breaking').map((c) => c.names.join(' '));
    for (const names of ['GET /companies/{id}', 'jobTitle', 'deal.lost', 'GET /contacts/search 404', 'region', 'limit', 'cursor']) {
      expect(breaking).toContain(names);
    }
    const unnamed = unnamedChanges(changes, read(CHANGELOG));
    expect(unnamed.length).toBeGreaterThanOrEqual(7);
    expect(unnamed.join('\n')).toContain('`GET /companies/{id}`');
  });

  it('fails the snapshot script, which writes nothing, until a **Breaking** entry names each change', () => {
    const snapshots = { v1: built.v1, internal: built.internal, v1Released: built.v1 };
    const broken = { v1: brokenV1(built.v1), internal: built.internal };
    expect(planSnapshot(broken, snapshots, read(CHANGELOG)).unnamed.length).toBeGreaterThanOrEqual(7);

    const names = '`GET /companies/{id}`, `jobTitle`, `deal.lost`, `GET /contacts/search` answering `404`, `region`, `limit`, `cursor`';
    const [head, tail] = [names.slice(0, names.indexOf('`deal')), names.slice(names.indexOf('`deal'))];
    const named = `# Changelog\n\n## [Unreleased]\n\n### Removed\n- **Breaking**: ${head}\n  ${tail}.\n`;
    expect(planSnapshot(broken, snapshots, named).unnamed).toEqual([]);
    // Named, but not marked as breaking: still refused; named under a release heading, not Unreleased: refused.
    const plain = `# Changelog\n\n## [Unreleased]\n\n### Removed\n- ${names}.\n\n## [1.0.0]\n`;
    const old = `# Changelog\n\n## [Unreleased]\n\n## [1.0.0]\n- **Breaking**: ${names}.\n`;
    for (const changelog of [plain, old]) expect(unnamedChanges(changes, changelog).length).toBeGreaterThanOrEqual(7);
  });

  it('an additive change needs a CHANGELOG line too, not a breaking one', () => {
    const added = structuredClone(built.v1);
    added.components.schemas.ContactRecord.properties.nickname = { type: ['string', 'null'] };
    const change = contractChanges(built.v1, added);
    expect(change.map((c) => [c.kind, c.names.join(' ')])).toContainEqual(['non-breaking', 'nickname']);
    expect(unnamedChanges(change, read(CHANGELOG))).not.toEqual([]);
    expect(unnamedChanges(change, '## [Unreleased]\n### Added\n- `nickname` on contacts.\n')).toEqual([]);
  });

  // On /v1 (a fifth the size of the internal document, whose diff takes seconds): a tag put first shifts every other,
  // as a new tag does in the internal document's sorted list.
  it('a tag added ahead of the others is one addition, not every later tag renamed; a tag removed is breaking', () => {
    const doc = structuredClone(built.v1);
    const names = doc.tags.map((t: Json) => t.name);
    expect(names.length).toBeGreaterThan(1);
    const added = structuredClone(doc);
    added.tags = [{ name: 'Aardvarks', description: 'Operations on aardvarks.' }, ...doc.tags];
    expect(contractChanges(doc, added).map((c) => [c.kind, c.names.join(' ')])).toEqual([['non-breaking', 'Aardvarks']]);
    const removed = structuredClone(doc);
    removed.tags = doc.tags.slice(1);
    expect(contractChanges(doc, removed).map((c) => [c.kind, c.names.join(' ')])).toEqual([['breaking', names[0]]]);
  });

  it('a deprecation is a change to announce; descriptions are not', () => {
    const edited = structuredClone(built.v1);
    edited.paths['/contacts/search'].get.deprecated = true;
    edited.paths['/contacts/search'].get.description = 'Reworded.';
    const change = contractChanges(built.v1, edited);
    expect(change.map((c) => [c.kind, c.names.join(' ')])).toEqual([['deprecated', 'GET /contacts/search']]);
    expect(isNamed(change[0]!, unreleasedEntries('## [Unreleased]\n- Deprecated: `GET /contacts/search`.'))).toBe(true);
  });
});

describe('the policy where api-smart-diff is inconsistent: enums are sets, added values and webhooks are additive', () => {
  it('a value inserted mid-list in an enum names that value only, as non-breaking; a reordered enum is no change', () => {
    const inserted = structuredClone(built.v1);
    const header = inserted.components.parameters.WebhookEvent.schema;
    header.enum.splice(3, 0, 'contact.merged_elsewhere');
    const change = contractChanges(built.v1, inserted);
    expect(change.map((c) => [c.kind, c.names.join(' ')])).toEqual([['non-breaking', 'contact.merged_elsewhere']]);

    const reordered = structuredClone(built.v1);
    reordered.components.schemas.FeedEvent.properties.event.enum.reverse();
    reordered.components.parameters.WebhookEvent.schema.enum.reverse();
    expect(contractChanges(built.v1, reordered)).toEqual([]);
  });

  it('a value added to an answer’s enum is listed, not breaking; one removed from it, or moved and removed, is breaking', () => {
    const added = structuredClone(built.v1);
    added.components.schemas.ErrorBody.properties.code.enum.push('brand_new_code');
    const change = contractChanges(built.v1, added);
    expect(change.length).toBeGreaterThan(0);
    expect(change.every((c) => c.kind === 'non-breaking' && c.names.join(' ') === 'brand_new_code')).toBe(true);
    expect(unnamedChanges(change, '## [Unreleased]\n### Added\n- The error code `brand_new_code`.\n')).toEqual([]);

    const removed = structuredClone(built.v1);
    const codes: string[] = removed.components.schemas.ErrorBody.properties.code.enum;
    removed.components.schemas.ErrorBody.properties.code.enum = codes.filter((c) => c !== 'invalid_cursor').reverse();
    expect(
      contractChanges(built.v1, removed)
        .filter((c) => c.kind === 'breaking')
        .map((c) => c.names.join(' ')),
    ).toContain('invalid_cursor');
  });

  it('a new webhook is listed, not breaking; a removed one is breaking', () => {
    const name = Object.keys(built.v1.webhooks)[0]!;
    const added = structuredClone(built.v1);
    added.webhooks['contact.merged_elsewhere'] = structuredClone(built.v1.webhooks[name]);
    expect(contractChanges(built.v1, added).map((c) => [c.kind, c.names.join(' ')])).toEqual([
      ['non-breaking', 'contact.merged_elsewhere'],
    ]);
    const removed = structuredClone(built.v1);
    delete removed.webhooks[name];
    expect(contractChanges(built.v1, removed).map((c) => [c.kind, c.names.join(' ')])).toContainEqual(['breaking', name]);
  });
});
