/** Issue 19: webhook attempts counted by outcome and attempt number, as recorded in the delivery log. */
import { RETRY_OFFSETS_MS } from '#core/webhooks/delivery/policy.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { insertEndpoint, startDeliveringApp, upsertContact, waitForLog } from '../webhooks/delivery/support.ts';
import { type Sample, sampleValue, scrapeMetrics } from './prom-text.ts';

let t: TestApp;
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
  t = await startDeliveringApp();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

const ATTEMPTS = 'leadwire_webhook_attempts_total';

/** Scrapes until `ready` holds (the counter moves once the round's transaction has committed), for at most 10 s. */
async function scrapeUntil(ready: (s: Sample[]) => boolean): Promise<Sample[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { samples } = await scrapeMetrics(t.origin);
    if (ready(samples) || Date.now() > deadline) return samples;
    await sleep(20);
  }
}

it('counts each attempt once, by outcome and attempt number, and names no endpoint or organization', async () => {
  const org = await t.newOrg();
  rx.respond((req, res) => void res.writeHead(req.url === '/ok' ? 200 : 503).end());
  const ok = await insertEndpoint(t, org.orgId, `${rx.origin}/ok`);
  const failing = await insertEndpoint(t, org.orgId, `${rx.origin}/fail`);
  const before = (await scrapeMetrics(t.origin)).samples;
  const delta = (s: Sample[], outcome: string, attempt: string) =>
    sampleValue(s, ATTEMPTS, { outcome, attempt }) - sampleValue(before, ATTEMPTS, { outcome, attempt });

  t.clock.freeze(t.clock.now());
  await upsertContact(t, org.publicKey);
  await waitForLog(t, ok.id, 1);
  await waitForLog(t, failing.id, 1);
  const first = await scrapeUntil((s) => delta(s, 'succeeded', '1') >= 1 && delta(s, 'failed', '1') >= 1);
  expect([delta(first, 'succeeded', '1'), delta(first, 'failed', '1'), delta(first, 'failed', '2')]).toEqual([1, 1, 0]);

  // The failed one's retry is due within 10% past its nominal offset.
  t.clock.advance(Math.ceil(RETRY_OFFSETS_MS[0] * 1.1) + 1);
  await waitForLog(t, failing.id, 2);
  const second = await scrapeUntil((s) => delta(s, 'failed', '2') >= 1);
  expect([delta(second, 'succeeded', '1'), delta(second, 'failed', '1'), delta(second, 'failed', '2')]).toEqual([1, 1, 1]);
  const { text } = await scrapeMetrics(t.origin);
  for (const id of [ok.id, failing.id, org.orgId]) expect(text).not.toContain(id);
});
