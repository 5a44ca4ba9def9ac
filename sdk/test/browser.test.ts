import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../test/support/app.ts';
import { hasChromium, sharedChromium } from '../../test/support/chromium.ts';
import { type Receiver, startReceiver } from '../../test/support/receiver.ts';
import { insertEndpoint, startDeliveringApp, upsertContact } from '../../test/webhooks/delivery/support.ts';
import { buildBundles, ENTRIES } from '../scripts/build.ts';

// The package's own builds of its browser entries, served as ES modules from one origin while the API is on another.
let t: TestApp;
let rx: Receiver;
let outDir: string;
let site: Server;
let siteOrigin: string;
let browser: Browser;
let page: Page;

const BROWSER_ENTRIES = ENTRIES.filter((e) => e.name === '.' || e.name === './webhooks');

/** An application page loading both entries as ES modules, as a bundler-free site would. */
const PAGE = `<!doctype html><title>integration</title>
<script type="module">
  import * as sdk from '/sdk/index.js';
  import * as webhooks from '/sdk/webhooks.js';
  window.leadwire = { sdk, webhooks };
</script>`;

type Loaded = { leadwire: { sdk: Record<string, any>; webhooks: Record<string, any> } };

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'leadwire-sdk-browser-'));
  const { missing } = await buildBundles(outDir, BROWSER_ENTRIES);
  if (missing.length) throw new Error(`not built: ${missing.map((e) => e.source).join(', ')}`);
  site = createServer((req, res) => {
    const file = /^\/sdk\/(index|webhooks)\.js$/.exec(req.url ?? '')?.[1];
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    else if (file)
      void readFile(join(outDir, `${file}.js`)).then((js) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(js));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  [t, rx, browser] = await Promise.all([
    startDeliveringApp(),
    startReceiver(),
    hasChromium ? sharedChromium() : Promise.resolve(undefined as never),
  ]);
  if (browser) {
    page = await browser.newPage();
    await page.goto(`${siteOrigin}/`);
    await page.waitForFunction(() => 'leadwire' in window);
  }
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await rx?.close();
  await new Promise((resolve) => site?.close(resolve));
  await rm(outDir, { recursive: true, force: true });
});

describe.skipIf(!hasChromium)('the SDK in headless Chromium, on a page of another origin than the API', () => {
  it('calls /v1 across origins with the /v1 client: a real upsert and search, and a LeadwireError for a bad key', async () => {
    const org = await t.newOrg();
    const email = `browser-${Date.now()}@example.com`;
    expect(new URL(t.origin).origin).not.toBe(siteOrigin);
    const result = await page.evaluate(
      async ({ baseUrl, apiKey, email }) => {
        const { createClient, LeadwireError } = (window as unknown as Loaded).leadwire.sdk;
        const lw = createClient({ baseUrl, apiKey });
        const upserted = await lw.contacts.upsert({ email, firstName: 'Ada' });
        const found = await lw.contacts.search({ email });
        const refused = await createClient({ baseUrl, apiKey: 'ck_live_nope', maxRetries: 0 })
          .contacts.search({ email })
          .then(
            () => null,
            (e: { status: number; code: string; constructor: unknown }) => ({
              status: e.status,
              code: e.code,
              isLeadwireError: e instanceof LeadwireError,
            }),
          );
        // The application surface allows only the application's own origin: from here the browser blocks it.
        const appSurface = await fetch(`${baseUrl}/trpc/me`, { headers: { authorization: `Bearer ${apiKey}` } }).then(
          () => 'allowed',
          () => 'blocked',
        );
        return { origin: location.origin, upserted, found, refused, appSurface };
      },
      { baseUrl: `${t.origin}/api`, apiKey: org.publicKey, email },
    );
    expect(result.origin).toBe(siteOrigin);
    expect(result.upserted).toMatchObject({ id: expect.any(String), created: true });
    expect(result.found).toMatchObject({ id: result.upserted.id, email, firstName: 'Ada' });
    expect(result.refused).toEqual({ status: 401, code: expect.any(String), isLeadwireError: true });
    expect(result.appSurface).toBe('blocked');
    const [row] = await t.sql<{ email: string }>('select email from contacts where id = ?', [result.upserted.id]);
    expect(row?.email).toBe(email);
  });

  it('verifies a real delivery with Web Crypto in the page, and refuses it tampered', async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/browser`);
    const email = await upsertContact(t, org.publicKey);
    let req = rx.requests.find((r) => r.url === '/browser');
    for (let n = rx.requests.length; !req; n++) req = (await rx.waitFor(n + 1)).find((r) => r.url === '/browser');
    const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const outcome = await page.evaluate(
      async ({ body, headers, secret }) => {
        const { verifyWebhook, dedupeKey } = (window as unknown as Loaded).leadwire.webhooks;
        const rawBody = new TextEncoder().encode(body);
        const event = await verifyWebhook({ rawBody, headers: new Headers(headers), secret });
        const tampered = await verifyWebhook({ rawBody: body.replace('Ada', 'Eve'), headers, secret }).then(
          () => 'accepted',
          (e: { name: string; reason: string }) => `${e.name}:${e.reason}`,
        );
        return { event, key: dedupeKey(event), tampered, hasNodeBuffer: 'Buffer' in globalThis };
      },
      { body: req.rawBody.toString('utf8'), headers, secret: endpoint.secret },
    );
    expect(outcome.hasNodeBuffer).toBe(false);
    expect(outcome.event).toMatchObject({ event: 'contact.created', data: { contact: { email } } });
    expect(outcome.key).toMatch(/^contact\.created\|/);
    expect(outcome.tampered).toBe('WebhookVerificationError:invalid_signature');
  });
});
