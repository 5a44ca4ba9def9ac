import { TestRandom } from '#core/random.ts';
import { nextAttemptAt, RETRY_JITTER, RETRY_OFFSETS_MS } from '#core/webhooks/delivery/policy.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, insertEndpoint, upsertContact, waitForLog, startDeliveringApp } from './support.ts';

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

/** The largest draw a source gives: just under 1. */
const TOP = 1 - 2 ** -53;
const NOMINAL = [30_000, 120_000, 480_000, 1_920_000];
const bounds = (offset: number) => [Math.round(offset * 0.9), Math.round(offset * 1.1)] as const;

describe('retry jitter', () => {
  it('spreads ten deliveries that failed together over ten retry times, within 10% of 30 s, 2, 8 and 32 min, at each retry', async () => {
    const org = await t.newOrg();
    const paths = Array.from({ length: 10 }, (_, i) => `/jitter-${i}`);
    rx.respond((req, res) => void res.writeHead(paths.includes(req.url) ? 503 : 200).end());
    // Ten endpoints, so that no endpoint reaches ten failures in a row and is disabled on the way.
    const endpoints = [];
    for (const path of paths) endpoints.push(await insertEndpoint(t, org.orgId, `${rx.origin}${path}`));
    const start = t.clock.now();
    t.clock.freeze(start);
    // Draws from one end of the range to the other; which delivery gets which does not matter.
    const draws = [0, 0.11, 0.22, 0.33, 0.44, 0.55, 0.66, 0.77, 0.88, TOP];
    try {
      t.random.queue(...draws);
      await upsertContact(t, org.publicKey);
      for (const [retry, nominal] of NOMINAL.entries()) {
        for (const e of endpoints) await waitForLog(t, e.id, retry + 1);
        const deliveries = (await Promise.all(endpoints.map((e) => deliveriesOf(t, e.id)))).flat();
        expect(deliveries.map((d) => [d.state, d.attempts, d.first_attempt_at!.getTime()])).toEqual(
          Array(10).fill(['pending', retry + 1, start.getTime()]),
        );
        const offsets = deliveries.map((d) => d.next_attempt_at!.getTime() - start.getTime()).sort((a, b) => a - b);
        expect(offsets).toEqual(draws.map((d) => Math.round(nominal * (1 + 0.1 * (2 * d - 1)))));
        expect(new Set(offsets).size).toBe(10);
        const [low, high] = bounds(nominal);
        expect(offsets[0]).toBe(low);
        expect(offsets[9]).toBe(high);
        // The log announces the same times.
        const logged = await Promise.all(endpoints.map(async (e) => (await waitForLog(t, e.id, retry + 1))[retry]!));
        expect(logged.map((l) => l.next_attempt_at!.getTime() - start.getTime()).sort((a, b) => a - b)).toEqual(offsets);
        if (retry < NOMINAL.length - 1) t.random.queue(...draws);
        t.clock.set(new Date(start.getTime() + high));
      }
      // The fifth attempt is the last: no draw is needed, none is taken.
      for (const e of endpoints) expect((await waitForLog(t, e.id, 5)).map((l) => l.outcome)).toEqual(Array(5).fill('failed'));
      const done = (await Promise.all(endpoints.map((e) => deliveriesOf(t, e.id)))).flat();
      expect(done.map((d) => [d.state, d.next_attempt_at])).toEqual(Array(10).fill(['failed', null]));
    } finally {
      t.clock.unfreeze();
      t.random.reset();
    }
  });
});

describe('nextAttemptAt', () => {
  const first = new Date('2026-11-26T05:00:00.000Z');
  const offset = (made: number, draw: number) => nextAttemptAt(first, made, draw)!.getTime() - first.getTime();

  it('keeps each of the four retries within 10% of its nominal offset, the middle draw on it, and stops after the fifth attempt', () => {
    expect(RETRY_JITTER).toBe(0.1);
    expect([...RETRY_OFFSETS_MS]).toEqual(NOMINAL);
    const source = new TestRandom();
    for (const [i, nominal] of NOMINAL.entries()) {
      const [low, high] = bounds(nominal);
      expect([offset(i + 1, 0), offset(i + 1, 0.5), offset(i + 1, TOP)]).toEqual([low, nominal, high]);
      for (let n = 0; n < 1_000; n++) {
        const got = offset(i + 1, source.next());
        expect(got).toBeGreaterThanOrEqual(low);
        expect(got).toBeLessThanOrEqual(high);
      }
    }
    // The ranges do not overlap: retries stay in order whatever the draws.
    for (let i = 1; i < NOMINAL.length; i++) expect(bounds(NOMINAL[i]!)[0]).toBeGreaterThan(bounds(NOMINAL[i - 1]!)[1]);
    expect(nextAttemptAt(first, 5, 0.5)).toBeNull();
  });

  it('is driven by a test source that gives its queued draws first, then its fixed one, and refuses a draw outside [0, 1)', () => {
    const source = new TestRandom();
    source.fix(0.25);
    source.queue(0, 0.75);
    expect([source.next(), source.next(), source.next(), source.next()]).toEqual([0, 0.75, 0.25, 0.25]);
    for (const bad of [1, -0.1, Number.NaN]) expect(() => source.queue(bad)).toThrow(RangeError);
    expect(() => source.fix(1.5)).toThrow(RangeError);
  });
});
