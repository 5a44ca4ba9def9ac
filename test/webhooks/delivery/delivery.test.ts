import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, endpointRow, expectSigned, insertEndpoint, upsertContact, waitForLog, startDeliveringApp } from './support.ts';

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

/** A fresh organization with one endpoint on its own path of the shared receiver, answering as `status` says. */
async function setUp(path: string, status: (n: number) => number, opts: { failureCount?: number } = {}) {
  const org = await t.newOrg();
  let n = 0;
  const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/${path}`, opts);
  const seen = () => rx.requests.filter((r) => r.url === `/${path}`);
  rx.respond((req, res) => {
    const code = req.url === `/${path}` ? status(++n) : 200;
    res.writeHead(code, code === 302 ? { location: `${rx.origin}/elsewhere` } : {}).end(`answer ${code}`);
  });
  return { org, endpoint, seen };
}

describe('delivery of a /v1 upsert', () => {
  it('reaches the receiver, signed over the exact bytes, with source api and every header; the log records it', async () => {
    const { org, endpoint, seen } = await setUp('happy', () => 200);
    const email = await upsertContact(t, org.publicKey);
    const [line] = await waitForLog(t, endpoint.id, 1);
    const [req] = seen();
    expect(req).toBeDefined();
    expectSigned(req!, endpoint.secret);
    const body = JSON.parse(req!.rawBody.toString('utf8'));
    expect(body).toMatchObject({ event: 'contact.created', source: 'api', data: { contact: { email } } });
    expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(req!.method).toBe('POST');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['user-agent']).toBe('Leadwire-Webhooks/1.0');
    expect(req!.headers['x-webhook-event']).toBe('contact.created');
    expect(req!.headers['x-webhook-timestamp']).toMatch(/^\d{10}$/);

    const [delivery] = await deliveriesOf(t, endpoint.id);
    expect(delivery).toMatchObject({ state: 'succeeded', attempts: 1, manual: false, next_attempt_at: null });
    // The attempt id is X-Webhook-Id; the delivery id is Standard Webhooks' webhook-id; the body is stored as sent.
    expect(line).toMatchObject({
      attempt: 1,
      outcome: 'succeeded',
      status_code: 200,
      response_body: 'answer 200',
      error: null,
      next_attempt_at: null,
    });
    expect(req!.headers['x-webhook-id']).toBe(line!.id);
    expect(req!.headers['webhook-id']).toBe(delivery!.id);
    expect(req!.rawBody.toString('utf8')).toBe(delivery!.body);
    expect(await t.sql('select event_id from outbox_pending where event_id = ?', [delivery!.event_id])).toEqual([]);
  });

  it('retries a failing receiver at 30 s, 2, 8 and 32 min after the first try, 5 attempts in all, each with a new X-Webhook-Id', async () => {
    // The middle draw of the jitter is the nominal schedule (jitter.test.ts spreads it).
    t.random.fix(0.5);
    const { org, endpoint, seen } = await setUp('retry', () => 503);
    await upsertContact(t, org.publicKey);
    let log = await waitForLog(t, endpoint.id, 1);
    const [first] = await deliveriesOf(t, endpoint.id);
    const start = first!.first_attempt_at!.getTime();
    const offsets = [30_000, 120_000, 480_000, 1_920_000];
    for (const [i, offset] of offsets.entries()) {
      // Announced in the log and on the delivery, to the millisecond.
      expect(log[i]!.next_attempt_at!.getTime()).toBe(start + offset);
      const [d] = await deliveriesOf(t, endpoint.id);
      expect(d).toMatchObject({ state: 'pending', attempts: i + 1 });
      expect(d!.next_attempt_at!.getTime()).toBe(start + offset);
      // Not before it is due: one millisecond short changes nothing, as the next sweep (which runs every 20 ms) shows.
      t.clock.freeze(new Date(start + offset - 1));
      await waitForSweeps(t, 2);
      expect(seen()).toHaveLength(i + 1);
      t.clock.set(new Date(start + offset));
      log = await waitForLog(t, endpoint.id, i + 2);
    }
    t.clock.unfreeze();
    t.random.reset();
    expect(log.map((l) => [l.attempt, l.outcome, l.status_code])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'failed', 503]));
    expect(log[4]!.next_attempt_at).toBeNull();
    const [done] = await deliveriesOf(t, endpoint.id);
    expect(done).toMatchObject({ state: 'failed', attempts: 5, next_attempt_at: null });
    const requests = seen();
    expect(requests).toHaveLength(5);
    expect(new Set(requests.map((r) => r.headers['x-webhook-id'])).size).toBe(5);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([done!.id]));
    for (const r of requests) expectSigned(r, endpoint.secret);
    expect((await endpointRow(t, endpoint.id))!.failure_count).toBe(5);
  });

  it('stops retrying at the first 2xx, and a success resets the failure count', async () => {
    const { org, endpoint, seen } = await setUp('recovering', (n) => (n === 1 ? 500 : 204), { failureCount: 7 });
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 1);
    expect((await endpointRow(t, endpoint.id))!.failure_count).toBe(8);
    const [d] = await deliveriesOf(t, endpoint.id);
    t.clock.set(d!.next_attempt_at!);
    const log = await waitForLog(t, endpoint.id, 2);
    expect(log.map((l) => l.outcome)).toEqual(['failed', 'succeeded']);
    expect(log[1]).toMatchObject({ status_code: 204, next_attempt_at: null });
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'succeeded', attempts: 2, next_attempt_at: null });
    expect((await endpointRow(t, endpoint.id))!.failure_count).toBe(0);
    expect(seen()).toHaveLength(2);
  });

  it('does not follow a redirect: a 302 is a failed attempt, retried later', async () => {
    const { org, endpoint, seen } = await setUp('moved', () => 302);
    const before = rx.requests.filter((r) => r.url === '/elsewhere').length;
    await upsertContact(t, org.publicKey);
    const [line] = await waitForLog(t, endpoint.id, 1);
    expect(line).toMatchObject({ outcome: 'failed', status_code: 302 });
    expect(line!.next_attempt_at).not.toBeNull();
    expect(seen()).toHaveLength(1);
    expect(rx.requests.filter((r) => r.url === '/elsewhere')).toHaveLength(before);
    expect((await deliveriesOf(t, endpoint.id))[0]).toMatchObject({ state: 'pending', attempts: 1 });
  });

  it('fans one event out to every subscribed endpoint of the organization, and to nothing else', async () => {
    const { org, endpoint, seen } = await setUp('fan-a', () => 200);
    const other = await insertEndpoint(t, org.orgId, `${rx.origin}/fan-b`, { events: ['contact.created'] });
    const unsubscribed = await insertEndpoint(t, org.orgId, `${rx.origin}/fan-c`, { events: ['deal.created'] });
    const stranger = await t.newOrg();
    const foreign = await insertEndpoint(t, stranger.orgId, `${rx.origin}/fan-d`);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 1);
    await waitForLog(t, other.id, 1);
    expect(seen()).toHaveLength(1);
    expect(await deliveriesOf(t, unsubscribed.id)).toEqual([]);
    expect(await deliveriesOf(t, foreign.id)).toEqual([]);
  });
});

/** Waits until the pump has finished `n` more rounds (its rounds are what the test waits on, not time). */
async function waitForSweeps(t: TestApp, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await pumpOf(t.runtime.deps).nextRound();
}
