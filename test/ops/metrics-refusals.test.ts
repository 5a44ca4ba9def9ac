/**
 * Issue 19: every refusal the edge makes is counted in leadwire_refusals_total by a reason from a short fixed list
 * (missing, malformed and unknown keys, oversized and malformed requests, per-address limits, the sign-in throttle),
 * and the pacer's held refusals in leadwire_refusals_held_total. No key, organization, address or path is a label.
 */
import { generateKeyValue } from '#core/auth/key-material.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { rawRequest } from '../support/raw-http.ts';
import { type Sample, sampleValue, scrapeMetrics } from './prom-text.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
beforeAll(async () => {
  // Four refusals a second answered at once, the next held 1 ms; sign-ups: one an hour per address.
  t = await initTestApp({ V1_REFUSALS_FREE_PER_SECOND: '4', V1_REFUSAL_DELAY_MS: '1', SIGNUP_PER_ADDRESS_PER_HOUR: '1' });
  org = await t.newOrg();
});
afterAll(async () => t?.close());

const REFUSALS = 'leadwire_refusals_total';

async function counted(send: () => Promise<void>): Promise<{ delta: (reason: string) => number; held: number; text: string }> {
  const before = (await scrapeMetrics(t.origin)).samples;
  await send();
  const { samples: after, text } = await scrapeMetrics(t.origin);
  const d = (s: Sample[], b: Sample[], name: string, labels: Record<string, string>) =>
    sampleValue(s, name, labels) - sampleValue(b, name, labels);
  return {
    delta: (reason) => d(after, before, REFUSALS, { reason }),
    held: d(after, before, 'leadwire_refusals_held_total', {}),
    text,
  };
}

const v1 = (path: string, init: RequestInit = {}) => fetch(`${t.v1}${path}`, init);

it('counts missing, malformed and unknown keys, then the unknown key refused from memory, held past the free rate', async () => {
  const unknown = generateKeyValue();
  t.clock.freeze(t.clock.now());
  try {
    const r = await counted(async () => {
      expect((await v1('/contacts')).status).toBe(401);
      expect((await v1('/contacts', { headers: { authorization: 'Bearer not-a-key' } })).status).toBe(401);
      const withUnknown = () => v1('/contacts', { headers: { authorization: `Bearer ${unknown}` } });
      for (let i = 0; i < 2; i++) expect((await withUnknown()).status).toBe(401);
      // Every refusal counts (issue 28): the fifth of this (frozen) second is past the four free, held until the clock
      // moves on.
      const third = withUnknown();
      const deadline = Date.now() + 5_000;
      while (t.clock.sleeping === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(t.clock.sleeping).toBe(1);
      t.clock.advance(1);
      expect((await third).status).toBe(401);
    });
    expect([r.delta('missing_key'), r.delta('malformed_key'), r.delta('unknown_key'), r.delta('known_bad_key')]).toEqual([1, 1, 1, 2]);
    expect(r.held).toBe(1);
    expect(r.text).not.toContain(unknown.slice(8, 20));
  } finally {
    t.clock.unfreeze();
  }
});

it('counts oversized and malformed bodies and URLs, oversized headers and garbled requests, by their code', async () => {
  const json = { authorization: `Bearer ${org.publicKey}`, 'content-type': 'application/json' };
  const r = await counted(async () => {
    expect((await v1('/contacts/upsert', { method: 'POST', headers: json, body: `{"a":"${'x'.repeat(1_100_000)}"}` })).status).toBe(413);
    expect((await v1('/contacts/upsert', { method: 'POST', headers: json, body: '{"email":' })).status).toBe(400);
    expect((await v1('/contacts/search?q=%FF', { headers: json })).status).toBe(400);
    const big = await rawRequest(t.origin, `GET /api/v1/contacts HTTP/1.1\r\nhost: x\r\nx-filler: ${'y'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    const garbled = await rawRequest(t.origin, 'NOT HTTP AT ALL\r\n\r\n');
    expect(garbled.status).toBe(400);
  });
  expect(
    ['payload_too_large', 'malformed_json', 'malformed_url', 'headers_too_large', 'not_http'].map((reason) => r.delta(reason)),
  ).toEqual([1, 1, 1, 1, 1]);
  // Refusals only: a request refused by validation of its content is an answer, not abuse.
  expect(
    (await counted(async () => void (await v1('/contacts/upsert', { method: 'POST', headers: json, body: '{"email":"x"}' })))).delta(
      'validation_failed',
    ),
  ).toBe(0);
});

it('counts a per-address budget spent (sign-ups)', async () => {
  const signUp = (n: number) =>
    fetch(`${t.origin}/api/accounts/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `refused-${n}-${Date.now()}@example.com`,
        password: 'correct horse battery staple',
        organizationName: 'X',
      }),
    });
  const r = await counted(async () => {
    expect([(await signUp(1)).status, (await signUp(2)).status]).toEqual([201, 429]);
  });
  expect(r.delta('address_limited')).toBe(1);
});
