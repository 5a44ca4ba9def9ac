/**
 * The SDK and the server cannot drift apart: the committed types are what the server's OpenAPI document generates
 * today, and the defaults the README documents are the ones the code uses.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_EVENTS, GENERATED_V1, generateEventNames, generateV1Types } from '../scripts/generate-types.ts';
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
