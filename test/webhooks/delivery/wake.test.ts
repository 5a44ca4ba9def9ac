/**
 * An idle server costs its database next to nothing (issue 27; docs/operating.md, "An idle server"): the pump is woken
 * by the writes that give it work and sleeps until its next due attempt, so its backstop poll can be long. Here the
 * backstop is 10 minutes: every delivery below arrives only because something woke the pump.
 */
import { loadConfig } from '#core/config.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { PUMP_WAKE_CHANNEL } from '#core/webhooks/delivery/wake.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, insertEndpoint, startEngine, upsertContact, waitForLog } from './support.ts';

const BACKSTOP_MS = 600_000;
let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: String(BACKSTOP_MS) });
  await startEngine(t);
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

/** Runs a round and waits for the pump to settle between rounds: what it plans then is what an idle pump does. */
async function quietPlan() {
  const pump = pumpOf(t.runtime.deps);
  await pump.nextRound();
  for (let i = 0; i < 200 && pump.plan === null; i++) await new Promise((r) => setTimeout(r, 10));
  const plan = pump.plan;
  if (!plan) throw new Error('the pump never went quiet');
  return plan;
}

describe('the webhook pump, woken instead of polling', () => {
  it('sleeps for the whole backstop after a round that found nothing, and by default that is 30 s, not 100 ms', async () => {
    expect(loadConfig({}).WEBHOOK_PUMP_INTERVAL_MS).toBe(30_000);
    const plan = await quietPlan();
    // Nothing due in this database: no due timer, and the next look is the backstop (less what elapsed since).
    expect(plan.dueAt).toBeNull();
    expect(plan.backstopInMs).toBeGreaterThan(BACKSTOP_MS - 60_000);
  });

  it('delivers a /v1 upsert promptly: the write wakes the pump once it committed', async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/woken`);
    rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    await upsertContact(t, org.publicKey);
    const [line] = await waitForLog(t, endpoint.id, 1);
    expect(line).toMatchObject({ outcome: 'succeeded', event: 'contact.created' });
  });

  it('sleeps until a retry is due on the clock, and a manual redelivery wakes it too', async () => {
    const org = await t.newOrg();
    let n = 0;
    rx.respond((req, res) => void res.writeHead(req.url === '/retry' && ++n === 1 ? 500 : 200).end(`answer ${n}`));
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/retry`);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 1);
    const [delivery] = await deliveriesOf(t, endpoint.id);
    const retryAt = delivery!.next_attempt_at!;
    expect(delivery!.state).toBe('pending');
    // The pump knows when the retry is due (told by the outcome it recorded, or read after its round)...
    await expect.poll(() => pumpOf(t.runtime.deps).plan?.dueAt?.getTime()).toBe(retryAt.getTime());
    // ...and runs a round when the clock gets there, long before its backstop.
    t.clock.set(retryAt);
    const lines = await waitForLog(t, endpoint.id, 2);
    expect(lines.map((l) => l.outcome)).toEqual(['failed', 'succeeded']);

    const again = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/deliveries/${delivery!.id}/redeliver`, org.internalKey);
    expect(again.status).toBe(202);
    const all = await waitForLog(t, endpoint.id, 3);
    expect(all[2]).toMatchObject({ outcome: 'succeeded' });
  });

  it('is woken by a NOTIFY from another process, and runs a round when its LISTEN connection is back after a loss', async () => {
    const org = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/notified`, { events: ['contact.updated'] });
    rx.respond((_req, res) => void res.writeHead(200).end('ok'));
    // Written behind the app's back (as another process would): the outbox trigger queues it, nobody in this process
    // hears of it; the NOTIFY an api process sends after such a write wakes the pump.
    const insertEvent = () =>
      t.sql(`insert into outbox_events (organization_id, event, payload) values (?, 'contact.updated', ?::jsonb)`, [
        org.orgId,
        JSON.stringify({ event: 'contact.updated', timestamp: new Date().toISOString(), data: {} }),
      ]);
    await quietPlan();
    await insertEvent();
    await t.sql(`select pg_notify('${PUMP_WAKE_CHANNEL}', '')`);
    await waitForLog(t, endpoint.id, 1);

    // A wake sent while the connection is down is lost: the pump looks once it listens again.
    const listener = t.runtime.pumpWake!;
    const pid = listener.backendPid;
    await quietPlan();
    await t.sql('select pg_terminate_backend(?)', [pid]);
    await expect.poll(() => listener.listening, { timeout: 15_000 }).toBe(false);
    await insertEvent();
    await expect.poll(() => listener.listening && listener.backendPid !== pid, { timeout: 15_000 }).toBe(true);
    const lines = await waitForLog(t, endpoint.id, 2);
    expect(lines.map((l) => l.outcome)).toEqual(['succeeded', 'succeeded']);
  });
});
