import { SKIP_FILTERED } from '#core/webhooks/delivery/policy.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { deliveriesOf, startDeliveringApp, waitForLog } from './support.ts';

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  rx.respond((_req, res) => void res.writeHead(200).end('ok'));
  t = await startDeliveringApp();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

let seq = 0;
async function upsert(t: TestApp, key: string, body: Record<string, unknown>): Promise<string> {
  const email = `filter${++seq}-${Date.now()}@example.com`;
  const res = await call(t, 'POST', '/contacts/upsert', { key, body: { email, firstName: 'Ada', ...body } });
  expect(res.status).toBe(200);
  return email;
}

/** An organization with an endpoint created through the API, on its own path of the shared receiver. */
async function setUp(path: string, filter: unknown) {
  const org = await t.newOrg();
  const created = await internalRest(t, 'POST', '/webhooks', org.internalKey, {
    url: `${rx.origin}/${path}`,
    events: ['contact.created'],
    filter,
  });
  expect(created.status).toBe(201);
  const received = () =>
    rx.requests.filter((r) => r.url === `/${path}`).map((r) => JSON.parse(r.rawBody.toString('utf8')).data.contact.email);
  return { org, endpointId: created.body.id as string, received };
}

describe('delivery filters, applied at dispatch', () => {
  it('sends only matching events; the rest are recorded as filtered: not sent, not counted toward the hour, no gap', async () => {
    const { org, endpointId, received } = await setUp('vip', { 'contact.tags': 'vip' });
    const plain = await upsert(t, org.publicKey, {});
    const vip = await upsert(t, org.publicKey, { tags: ['vip'] });
    const log = await waitForLog(t, endpointId, 2);
    expect(log.map((l) => [l.attempt, l.outcome, l.error]).sort()).toEqual([
      [0, 'filtered', SKIP_FILTERED],
      [1, 'succeeded', null],
    ]);
    expect(received()).toEqual([vip]);
    const deliveries = await deliveriesOf(t, endpointId);
    expect(deliveries.map((d) => d.state).sort()).toEqual(['filtered', 'succeeded']);
    expect(JSON.parse(deliveries.find((d) => d.state === 'filtered')!.body).data.contact.email).toBe(plain);
    // Only the delivery sent spent the hourly allowance; the filtered one is no missed event (no gap on the next one).
    const [counter] = await t.sql<{ count: number }>('select count from rate_limit_counters where bucket = ?', [`webhooks:${org.orgId}`]);
    expect(counter!.count).toBe(1);
    const [endpoint] = await t.sql<{ gap_skipped: number }>('select gap_skipped from webhook_endpoints where id = ?', [endpointId]);
    expect(endpoint!.gap_skipped).toBe(0);
    expect(rx.requests.filter((r) => r.url === '/vip').every((r) => !('gap' in JSON.parse(r.rawBody.toString('utf8'))))).toBe(true);

    // The changes feed still has every event: read until both show, since the feed holds back an event while an older
    // transaction (the engine's, under load) may still commit one before it.
    const emails = async () =>
      (await call(t, 'GET', '/events?types=contact.created', { key: org.publicKey })).body.items
        .map((e: { data: { contact: { email: string } } }) => e.data.contact.email)
        .sort();
    let seen: string[] = await emails();
    for (const deadline = Date.now() + 15_000; seen.length < 2 && Date.now() < deadline; seen = await emails())
      await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([plain, vip].sort());
  });

  it('the delivery log lists filtered lines only when asked for; recover never replays them', async () => {
    const { org, endpointId } = await setUp('log', { 'contact.leadScore': { $gte: 30 } });
    await upsert(t, org.publicKey, {});
    await upsert(t, org.publicKey, { phone: '+15550100', title: 'CTO' });
    await waitForLog(t, endpointId, 2);
    const all = await internalRest(t, 'GET', `/webhooks/${endpointId}/deliveries`, org.internalKey);
    expect(all.body.items.map((i: { outcome: string }) => i.outcome)).toEqual(['succeeded']);
    const filtered = await internalRest(t, 'GET', `/webhooks/${endpointId}/deliveries?outcome=filtered`, org.internalKey);
    expect(filtered.body.items).toEqual([expect.objectContaining({ attempt: 0, outcome: 'filtered', error: SKIP_FILTERED })]);
    const since = new Date(t.clock.now().getTime() - 3_600_000).toISOString();
    const recovered = await internalRest(t, 'POST', `/webhooks/${endpointId}/recover`, org.internalKey, { since });
    expect(recovered.body).toEqual({ replayed: 0, remaining: 0 });
  });

  it('a changed filter applies to the next events; null removes it', async () => {
    const { org, endpointId, received } = await setUp('changed', { 'contact.firstName': 'Grace' });
    const first = await upsert(t, org.publicKey, {});
    await waitForLog(t, endpointId, 1);
    const cleared = await internalRest(t, 'PATCH', `/webhooks/${endpointId}`, org.internalKey, { filter: null });
    expect(cleared.body.filter).toBeNull();
    const second = await upsert(t, org.publicKey, {});
    await waitForLog(t, endpointId, 2);
    expect(received()).toEqual([second]);
    expect(received()).not.toContain(first);
  });
});
