import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ENTRIES, esbuildOptions, SDK_DIR } from '../scripts/build.ts';

// The budget: 5 KB gzipped for the /v1 client and verification together (openapi-fetch alone is 4.4 KB).
// Verification alone keeps under 2 KB, so that a receiver that imports only it stays tiny.
const WEBHOOKS_BUDGET = 2048;
const TOGETHER_BUDGET = 5 * 1024;

const source = (name: string) => join(SDK_DIR, ENTRIES.find((e) => e.name === name)!.source);

/** What an application's bundler makes of `code` importing the package: esbuild, the package's own settings, minified. */
async function bundled(code: string): Promise<{ text: string; gzipped: number }> {
  const base = esbuildOptions(ENTRIES.find((e) => e.name === '.')!, '/unused');
  const out = await build({
    ...base,
    entryPoints: undefined,
    outfile: undefined,
    stdin: { contents: code, resolveDir: SDK_DIR, loader: 'ts' },
    minify: true,
    write: false,
  });
  const text = out.outputFiles[0]!.text;
  return { text, gzipped: gzipSync(text, { level: 9 }).length };
}

describe('bundle size', () => {
  it('@leadwire/sdk/webhooks bundles (esbuild, minified ESM) to under 2 KB gzipped, with nothing of the server in it', async () => {
    const { text, gzipped } = await bundled(`export * from ${JSON.stringify(source('./webhooks'))};`);
    console.log(`@leadwire/sdk/webhooks: ${text.length} B minified, ${gzipped} B gzipped`);
    expect(text).toContain('verifyWebhook');
    expect(text).not.toMatch(/node:|zod/);
    expect(gzipped).toBeLessThan(WEBHOOKS_BUDGET);
  });

  it('@leadwire/sdk and @leadwire/sdk/webhooks together bundle to at most 5 KB gzipped, with no tRPC and nothing of Node', async () => {
    const { text, gzipped } = await bundled(
      `export * from ${JSON.stringify(source('.'))};\nexport * from ${JSON.stringify(source('./webhooks'))};`,
    );
    console.log(`@leadwire/sdk + /webhooks: ${text.length} B minified, ${gzipped} B gzipped (budget ${TOGETHER_BUDGET})`);
    expect(text).toContain('verifyWebhook');
    expect(text).toMatch(/contacts\/upsert/);
    expect(text).not.toMatch(/node:|zod|trpc/i);
    expect(gzipped).toBeLessThanOrEqual(TOGETHER_BUDGET);
  });
});
