import { describe, expect, it } from 'vitest';
import { buildConsole } from '../build.ts';

describe('the console bundle', () => {
  it('stays within its gzip budget (package.json leadwire.gzipBudget), script and stylesheet together', async () => {
    const built = await buildConsole();
    expect(built.files.map((f) => f.file)).toEqual(['console.css', 'console.js']);
    // A warning is a defect that still builds: an unclosed CSS block silently swallows the rules after it.
    expect(built.warnings).toEqual([]);
    expect(built.gzipBytes).toBeLessThanOrEqual(built.gzipBudget);
  });

  it('takes only types from the server: no module of packages/ or apps/server is bundled', async () => {
    const built = await buildConsole();
    expect(built.inputs.filter((f) => /(^|\/)(packages|apps\/server)\//.test(f))).toEqual([]);
    // It does bundle the typed client, the UI library and its router, and our own screens.
    expect(built.inputs.some((f) => f.includes('node_modules/@trpc/client/'))).toBe(true);
    expect(built.inputs.some((f) => f.includes('node_modules/preact/'))).toBe(true);
    // preact-iso's router alone (imported as preact-iso/router): not its prerender, which pulls in a renderer.
    expect(built.inputs.filter((f) => f.includes('node_modules/preact-iso/'))).toEqual(['node_modules/preact-iso/src/router.js']);
  });
});
