import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// The budget is 5 KB gzipped for the /v1 client and verification together; verification alone keeps under 2 KB.
const WEBHOOKS_BUDGET = 2048;

describe('bundle size', () => {
  it('sdk/src/webhooks.ts bundles (esbuild, minified ESM) to under 2 KB gzipped, with nothing of the server in it', async () => {
    const out = await build({
      entryPoints: [join(import.meta.dirname, '..', 'src', 'webhooks.ts')],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'neutral',
      write: false,
      logLevel: 'silent',
    });
    const code = out.outputFiles[0]!.text;
    const gzipped = gzipSync(code, { level: 9 }).length;
    console.log(`@leadwire/sdk/webhooks: ${code.length} B minified, ${gzipped} B gzipped`);
    expect(code).toContain('verifyWebhook');
    expect(code).not.toMatch(/node:|zod/);
    expect(gzipped).toBeLessThan(WEBHOOKS_BUDGET);
  });
});
