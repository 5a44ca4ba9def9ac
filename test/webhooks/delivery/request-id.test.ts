/**
 * Issue 19: the request id is carried into what a request causes. A contact written with `X-Request-Id` keeps the id on
 * its event, the delivery log shows it on each attempt, and the worker's log line about each attempt carries it as
 * `reqId`; the commit-to-attempt histogram sees each automatic attempt, retries by their number.
 */
import { RETRY_OFFSETS_MS } from '#core/webhooks/delivery/policy.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { internalRest } from '../../support/internal.ts';
import { type Receiver, startReceiver } from '../../support/receiver.ts';
import { waiter } from '../../support/waiter.ts';
import { type Sample, sampleValue, scrapeMetrics } from '../../ops/prom-text.ts';
import { insertEndpoint, startEngine, waitForLog } from './support.ts';

let t: TestApp;
let rx: Receiver;
const output: string[] = [];
const written = waiter();
beforeAll(async () => {
  rx = await startReceiver();
  const runtimeLogStream = { write: (line: string) => void (output.push(line), written.wake()) };
  t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', LOG_LEVEL: 'debug' }, { runtimeLogStream });
  await startEngine(t);
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

const lines = () => output.map((l) => JSON.parse(l) as Record<string, unknown>);
const attemptLine = (deliveryId: string, attempt: number) =>
  written.until(
    () => lines().some((l) => l.msg === 'webhook attempt' && l.deliveryId === deliveryId && l.attempt === attempt),
    () => `no log line for attempt ${attempt} of ${deliveryId}:\n${output.join('')}`,
    10_000,
  );
const HISTOGRAM = 'leadwire_webhook_commit_to_attempt_seconds';

it("a contact.created's delivery rows and the worker's lines about its attempts carry the id of the request that wrote it", async () => {
  const org = await t.newOrg();
  let calls = 0;
  rx.respond((_req, res) => void res.writeHead(++calls === 1 ? 503 : 200).end());
  const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/flaky`);
  const before = (await scrapeMetrics(t.origin)).samples;
  const delta = (s: Sample[], name: string, attempt: string) => sampleValue(s, name, { attempt }) - sampleValue(before, name, { attempt });

  const requestId = 'partner-ticket-4711';
  t.clock.freeze(t.clock.now());
  try {
    const res = await fetch(`${t.v1}/contacts/upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.publicKey}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ email: `reqid-${Date.now()}@example.com` }),
    });
    expect(res.status).toBe(200);
    const [event] = await t.sql<{ request_id: string | null }>(
      `select request_id from outbox_events where organization_id = ? and event = 'contact.created'`,
      [org.orgId],
    );
    expect(event?.request_id).toBe(requestId);

    const [first] = await waitForLog(t, endpoint.id, 1);
    await attemptLine(first!.delivery_id, 1);
    // The clock stands still: the first attempt started at the event's own instant.
    let after = (await scrapeMetrics(t.origin)).samples;
    expect(delta(after, `${HISTOGRAM}_count`, '1')).toBe(1);
    expect(delta(after, `${HISTOGRAM}_sum`, '1')).toBe(0);

    const wait = Math.ceil(RETRY_OFFSETS_MS[0] * 1.1) + 1;
    t.clock.advance(wait);
    await waitForLog(t, endpoint.id, 2);
    await attemptLine(first!.delivery_id, 2);
    after = (await scrapeMetrics(t.origin)).samples;
    expect(delta(after, `${HISTOGRAM}_count`, '2')).toBe(1);
    expect(delta(after, `${HISTOGRAM}_sum`, '2')).toBeCloseTo(wait / 1000, 6);
    expect(delta(after, `${HISTOGRAM}_count`, '1')).toBe(1);

    const attempts = lines().filter((l) => l.msg === 'webhook attempt' && l.deliveryId === first!.delivery_id);
    expect(attempts).toMatchObject([
      { reqId: requestId, attempt: 1, outcome: 'failed', statusCode: 503, event: 'contact.created', level: 30 },
      { reqId: requestId, attempt: 2, outcome: 'succeeded', statusCode: 200, event: 'contact.created', level: 20 },
    ]);
    // Never sent to the receiver: its contract is the spec's headers.
    for (const r of rx.requests) expect(Object.keys(r.headers)).not.toContain('x-request-id');

    const log = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries`, org.internalKey);
    expect(log.status).toBe(200);
    const items = (log.body as { items: { attempt: number; requestId: string | null }[] }).items;
    expect(items.map((i) => [i.attempt, i.requestId])).toEqual([
      [2, requestId],
      [1, requestId],
    ]);
  } finally {
    t.clock.unfreeze();
  }
});

it('a ping, which no request wrote as an event, shows no request id and is not a commit-to-attempt sample', async () => {
  const org = await t.newOrg();
  rx.respond((_req, res) => void res.writeHead(200).end());
  const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/ping`);
  const before = (await scrapeMetrics(t.origin)).samples;
  expect((await internalRest(t, 'POST', `/webhooks/${endpoint.id}/test`, org.internalKey)).status).toBeLessThan(300);
  const [row] = await waitForLog(t, endpoint.id, 1);
  await attemptLine(row!.delivery_id, 1);
  const after = (await scrapeMetrics(t.origin)).samples;
  expect(sampleValue(after, `${HISTOGRAM}_count`, { attempt: '1' })).toBe(sampleValue(before, `${HISTOGRAM}_count`, { attempt: '1' }));
  const log = await internalRest(t, 'GET', `/webhooks/${endpoint.id}/deliveries`, org.internalKey);
  expect((log.body as { items: { requestId: string | null }[] }).items).toMatchObject([{ requestId: null }]);
  expect(lines().find((l) => l.msg === 'webhook attempt' && l.deliveryId === row!.delivery_id)).not.toHaveProperty('reqId');
});
