import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { hourWindow } from '#core/webhooks/delivery/policy.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
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

const LIMIT_REASON = 'workspace over 1,000 deliveries per hour';

describe('the 1,000 deliveries per hour per workspace', () => {
  it('skips deliveries beyond the limit with a log line, counts manual ones too, and opens again with the next UTC hour', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/limited`);
    const hourStart = hourWindow(t.clock.now());
    t.clock.freeze(new Date(hourStart.getTime() + 59 * 60_000 + 58_000));
    try {
      await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 999)', [`webhooks:${org.orgId}`, hourStart]);
      await upsertContact(t, org.publicKey);
      await upsertContact(t, org.publicKey);
      const log = await waitForLog(t, endpoint.id, 2);
      expect(log.map((l) => [l.attempt, l.outcome, l.error]).sort()).toEqual([
        [0, 'skipped', LIMIT_REASON],
        [1, 'succeeded', null],
      ]);
      const ping = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/test`, org.internalKey);
      expect(ping.body).toMatchObject({ state: 'skipped', skipReason: LIMIT_REASON });
      const [logged] = await t.sql<{ outcome: string; attempt: number }>(
        'select outcome, attempt from webhook_attempts where delivery_id = ?',
        [ping.body.deliveryId],
      );
      expect(logged).toEqual({ outcome: 'skipped', attempt: 0 });

      // Two seconds later a new hour starts, with a fresh allowance.
      t.clock.set(new Date(hourStart.getTime() + 60 * 60_000));
      // A round that read the clock before it moved would count the next event in the old hour.
      await pumpOf(t.runtime.deps).nextRound();
      await upsertContact(t, org.publicKey);
      const after = await waitForLog(t, endpoint.id, 4);
      expect(after.at(-1)).toMatchObject({ attempt: 1, outcome: 'succeeded' });
      const states = (await deliveriesOf(t, endpoint.id)).map((d) => d.state);
      expect(states.filter((s) => s === 'skipped')).toHaveLength(2);
      expect(states.filter((s) => s === 'succeeded')).toHaveLength(2);
    } finally {
      t.clock.unfreeze();
    }
  });

  it('is per workspace: another organization delivers while one is over its limit', async () => {
    const full = await t.newOrg();
    const other = await t.newOrg();
    const a = await insertEndpoint(t, full.orgId, `${rx.origin}/full`);
    const b = await insertEndpoint(t, other.orgId, `${rx.origin}/other`);
    const now = t.clock.now();
    t.clock.freeze(now);
    try {
      await t.sql('insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 1000)', [
        `webhooks:${full.orgId}`,
        hourWindow(now),
      ]);
      await upsertContact(t, full.publicKey);
      await upsertContact(t, other.publicKey);
      expect((await waitForLog(t, a.id, 1))[0]).toMatchObject({ outcome: 'skipped', error: LIMIT_REASON });
      expect((await waitForLog(t, b.id, 1))[0]).toMatchObject({ outcome: 'succeeded' });
    } finally {
      t.clock.unfreeze();
    }
  });
});

describe('/api/webhooks/{id}: log, redeliver, recover', () => {
  it('lists every attempt newest first, filtered by outcome and event, in pages', async () => {
    const org = await t.newOrg();
    let n = 0;
    rx.respond((req, res) => void res.writeHead(req.url === '/log' && ++n === 1 ? 500 : 200).end(`answer ${n}`));
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/log`);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 1);
    t.clock.set((await deliveriesOf(t, endpoint.id))[0]!.next_attempt_at!);
    await waitForLog(t, endpoint.id, 2);

    const all = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries`, org.internalKey);
    expect(all.status).toBe(200);
    expect(all.body.items.map((i: { attempt: number; outcome: string }) => [i.attempt, i.outcome])).toEqual([
      [2, 'succeeded'],
      [1, 'failed'],
    ]);
    expect(all.body.items[1]).toEqual({
      id: expect.any(String),
      at: expect.any(String),
      event: 'contact.created',
      deliveryId: all.body.items[0].deliveryId,
      messageId: all.body.items[0].deliveryId,
      attempt: 1,
      outcome: 'failed',
      statusCode: 500,
      responseBody: 'answer 1',
      durationMs: expect.any(Number),
      error: 'the receiver answered 500',
      nextAttemptAt: expect.any(String),
      manual: false,
      // The upsert's own request id (its x-request-id, made by the server here).
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const failed = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries?outcome=failed`, org.internalKey);
    expect(failed.body.items.map((i: { attempt: number }) => i.attempt)).toEqual([1]);
    const other = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries?event=deal.created`, org.internalKey);
    expect(other.body.items).toEqual([]);
    const page1 = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries?limit=1`, org.internalKey);
    expect(page1.body.items).toHaveLength(1);
    const page2 = await internalRest(
      t,
      'GET',
      `/webhooks/${endpoint.id}/deliveries?limit=1&cursor=${page1.body.nextCursor}`,
      org.internalKey,
    );
    expect(page2.body).toMatchObject({ items: [{ attempt: 1 }], nextCursor: null });
  });

  it('recovers every failed or skipped delivery since a time as manual replays, once', async () => {
    const org = await t.newOrg();
    rx.respond((_req, res) => void res.writeHead(200).end());
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/recover`, { enabled: false });
    const since = new Date(t.clock.now().getTime() - 1000).toISOString();
    await upsertContact(t, org.publicKey);
    await upsertContact(t, org.publicKey);
    await waitForLog(t, endpoint.id, 2);
    await t.sql('update webhook_endpoints set enabled = true where id = ?', [endpoint.id]);

    const later = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/recover`, org.internalKey, {
      since: new Date(t.clock.now().getTime() + 60_000).toISOString(),
    });
    expect(later.body).toEqual({ replayed: 0, remaining: 0 });
    const res = await internalRest(t, 'POST', `/webhooks/${endpoint.id}/recover`, org.internalKey, { since });
    expect(res).toEqual({ status: 200, body: { replayed: 2, remaining: 0 } });
    await waitForLog(t, endpoint.id, 4);
    const deliveries = await deliveriesOf(t, endpoint.id);
    const originals = deliveries.filter((d) => !d.manual);
    const replays = deliveries.filter((d) => d.manual);
    expect(replays.map((r) => r.state)).toEqual(['succeeded', 'succeeded']);
    expect(replays.map((r) => r.replay_of).sort()).toEqual(originals.map((o) => o.id).sort());
    expect(replays.map((r) => r.body).sort()).toEqual(originals.map((o) => o.body).sort());
    // Already replayed with success: a second recover sends nothing again.
    expect((await internalRest(t, 'POST', `/webhooks/${endpoint.id}/recover`, org.internalKey, { since })).body).toEqual({
      replayed: 0,
      remaining: 0,
    });
  });

  it("is for owners and admins of the endpoint's organization, and refuses bad input with 400", async () => {
    const org = await t.newOrg();
    const stranger = await t.newOrg();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/private`);
    const [member] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'member') returning id`,
      [org.orgId, `m-${org.orgId}@example.com`],
    );
    const memberKey = await t.newKey({ orgId: org.orgId, userId: member!.id, name: 'member', type: 'internal' });
    const id = endpoint.id;
    const calls: [string, string, unknown?][] = [
      ['POST', `/webhooks/${id}/test`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['POST', `/webhooks/${id}/deliveries/${crypto.randomUUID()}/redeliver`],
      ['POST', `/webhooks/${id}/recover`, { since: '2026-01-01T00:00:00Z' }],
    ];
    for (const [method, path, body] of calls) {
      expect((await internalRest(t, method, path, memberKey, body)).body.code).toBe('forbidden_role');
      const foreign = await internalRest(t, method, path, stranger.internalKey, body);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
    }
    const missing = await internalRest(t, 'POST', `/webhooks/${id}/deliveries/${crypto.randomUUID()}/redeliver`, org.internalKey);
    expect([missing.status, missing.body.code]).toEqual([404, 'not_found']);
    for (const since of ['yesterday', '2026-13-01T00:00:00Z', 42]) {
      const bad = await internalRest(t, 'POST', `/webhooks/${id}/recover`, org.internalKey, { since });
      expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
    }
    const badId = await internalRest(t, 'POST', `/webhooks/not-a-uuid/test`, org.internalKey);
    expect([badId.status, badId.body.code]).toEqual([400, 'validation_failed']);
    const badOutcome = await internalRest(t, 'GET', `/webhooks/${id}/deliveries?outcome=maybe`, org.internalKey);
    expect([badOutcome.status, badOutcome.body.code]).toEqual([400, 'validation_failed']);
    expect(await deliveriesOf(t, id)).toEqual([]);
  });
});
