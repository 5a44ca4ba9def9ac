/**
 * The SDK and the server cannot drift apart: the committed types are what the server's OpenAPI document generates
 * today, and the defaults the README documents are the ones the code uses.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  GENERATED_CONTACT_ROW,
  GENERATED_DOMAIN,
  GENERATED_EVENTS,
  GENERATED_INTERNAL_ROUTER,
  GENERATED_V1,
  generateContactRow,
  generateDomain,
  generateEventNames,
  generateV1Types,
} from '../scripts/generate-types.ts';
import { procedureSummaries } from '../scripts/internal-types.ts';
import { DEFAULTS } from '../src/index.ts';

describe('the /v1 contract', () => {
  it('sdk/src/generated/v1.ts is what the server’s OpenAPI document generates now', async () => {
    const committed = await readFile(GENERATED_V1, 'utf8');
    const fresh = await generateV1Types();
    // Compared as a boolean first so that a drift fails with the instruction, not only with a long diff.
    expect(committed === fresh, 'sdk/src/generated/v1.ts is out of date with the /v1 contract: run npm run sdk:generate').toBe(true);
    expect(fresh).toMatch(/export interface paths \{/);
    expect(fresh).toMatch(/export interface webhooks \{/);
    for (const path of [
      '/contacts/search',
      '/contacts/upsert',
      '/contacts/batch-upsert',
      '/contacts/{id}/notes',
      '/companies/upsert',
      '/leads',
    ]) {
      expect(fresh).toContain(`"${path}": {`);
    }
  });

  it('sdk/src/generated/events.ts lists the event catalogue as it is now', async () => {
    const committed = await readFile(GENERATED_EVENTS, 'utf8');
    expect(
      committed === generateEventNames(),
      'sdk/src/generated/events.ts is out of date with the catalogue: run npm run sdk:generate',
    ).toBe(true);
    expect(committed).toContain('"contact.created"');
  });

  it('sdk/src/generated/contact-row.ts (the dry run’s validator) is what the document’s ContactUpsertInput compiles to now', async () => {
    const committed = await readFile(GENERATED_CONTACT_ROW, 'utf8');
    const fresh = await generateContactRow();
    expect(committed === fresh, 'sdk/src/generated/contact-row.ts is out of date with the /v1 contract: run npm run sdk:generate').toBe(
      true,
    );
    // Self-contained: the command line bundles no part of ajv.
    expect(fresh).not.toMatch(/\brequire\(|^import /m);
    expect(fresh).toMatch(/"maxLength":200/);
  });

  it('sdk/src/generated/domain.ts is the server’s normalizeDomain as it is now', async () => {
    const committed = await readFile(GENERATED_DOMAIN, 'utf8');
    expect(
      committed === (await generateDomain()),
      'sdk/src/generated/domain.ts is out of date with packages/core/src/companies/domain.ts: run npm run sdk:generate',
    ).toBe(true);
    expect(committed).toContain('export function normalizeDomain(input: string): string | null {');
  });
});

/**
 * Each procedure's JSDoc summary in the generated router type, by dotted path, read back from the layout
 * renderRouter writes: one member per line, sub-routers opening with `name: {`, two spaces deeper per level.
 */
function summariesIn(text: string): Map<string, string> {
  const found = new Map<string, string>();
  const path: string[] = [];
  let summary: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^( {4,})(?:\/\*\* (.*) \*\/|("[^"]+"|[\w$]+): (\{|TRPC\w+Procedure<.*)|\};)$/.exec(line);
    if (!m) continue;
    const depth = (m[1]!.length - 4) / 2;
    if (m[2] !== undefined) {
      summary = m[2].replaceAll('*\\/', '*/');
      continue;
    }
    path.length = depth;
    if (m[3] === undefined) continue;
    const name = m[3].startsWith('"') ? (JSON.parse(m[3]) as string) : m[3];
    if (m[4] === '{') path.push(name);
    else if (summary !== undefined) found.set([...path, name].join('.'), summary);
    summary = undefined;
  }
  return found;
}

describe('the internal router type', () => {
  // Its types are held by the type check (sdk/test/internal-router.test-d.ts), which cannot read comments.
  it('sdk/src/generated/internal-router.ts carries each procedure’s summary as the server documents it now', async () => {
    const committed = await readFile(GENERATED_INTERNAL_ROUTER, 'utf8');
    const summaries = await procedureSummaries();
    expect(summaries.size).toBeGreaterThan(50);
    expect(summariesIn(committed), 'sdk/src/generated/internal-router.ts is out of date: run npm run sdk:generate').toEqual(summaries);
  });
});

describe('documented defaults', () => {
  it('the defaults table of sdk/README.md lists exactly DEFAULTS', async () => {
    const readme = await readFile(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const section = readme.split('\n### Defaults\n')[1]?.split('\n#')[0];
    expect(section, 'sdk/README.md has a "### Defaults" section').toBeDefined();
    const rows = [...section!.matchAll(/^\| `(\w+)` \| ([\d,_]+) \|/gm)].map((m) => [m[1], Number(m[2]!.replace(/[,_]/g, ''))]);
    expect(Object.fromEntries(rows)).toEqual(DEFAULTS);
    expect(rows).toHaveLength(Object.keys(DEFAULTS).length);
  });
});

describe('documented install', () => {
  // The package is not on the npm registry yet (issue 28): the Install section's command installs what `npm pack` in
  // sdk/ writes, which pack.test.ts builds, installs and runs this README's examples from.
  it('the Install section installs the tarball `npm pack` makes, not a registry name', async () => {
    const sdkDir = join(import.meta.dirname, '..');
    const readme = await readFile(join(sdkDir, 'README.md'), 'utf8');
    const { version } = JSON.parse(await readFile(join(sdkDir, 'package.json'), 'utf8')) as { version: string };
    const section = readme.split('\n## Install\n')[1]?.split('\n## ')[0] ?? '';
    const commands = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
    expect(commands).toContain(`npm install ./leadwire-sdk-${version}.tgz`);
    expect(commands).not.toMatch(/npm install @leadwire\/sdk\b/);
  });
});
