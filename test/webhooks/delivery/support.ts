import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobDefinitions } from '../../../apps/server/src/jobs.ts';
import { MAIL_QUEUE } from '#core/mail/send-job.ts';
import { pumpOf } from '#core/webhooks/delivery/pump.ts';
import { DELIVER_QUEUE } from '#core/webhooks/delivery/sweep.ts';
import { newSigningSecret } from '#core/webhooks/transport/secret.ts';
import { expect } from 'vitest';
import { call, initTestApp, type TestApp } from '../../support/app.ts';
import type { ReceivedRequest } from '../../support/receiver.ts';

/** Starts what a worker process runs for webhooks: the pump (with its worker lock) and the deliver (and mail) workers. */
export async function startEngine(t: TestApp, opts: { mail?: boolean } = {}): Promise<void> {
  await pumpOf(t.runtime.deps).start();
  const queues = opts.mail ? [DELIVER_QUEUE, MAIL_QUEUE] : [DELIVER_QUEUE];
  await t.runtime.boss.work(jobDefinitions(t.runtime.deps).filter((d) => queues.includes(d.queue)));
}

/**
 * A test app that delivers: receivers on loopback allowed, a fast pump, and the engine started. The one way webhook
 * tests (and the capture, tracking, forms and SDK tests that check deliveries) start a server.
 */
export async function startDeliveringApp(): Promise<TestApp> {
  const t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' });
  await startEngine(t);
  return t;
}

export interface Endpoint {
  id: string;
  secret: string;
}

/** An endpoint row as the endpoints API creates it (inserted directly: this suite is about delivery). */
export async function insertEndpoint(
  t: TestApp,
  orgId: string,
  url: string,
  opts: { events?: string[]; kind?: 'endpoint' | 'rest_hook'; enabled?: boolean; failureCount?: number } = {},
): Promise<Endpoint> {
  const secret = newSigningSecret();
  const [row] = await t.sql<{ id: string }>(
    `insert into webhook_endpoints (organization_id, kind, url, events, enabled, disabled_reason, failure_count, secret)
     values (?, ?, ?, ?::text[], ?, ?, ?, ?) returning id`,
    [
      orgId,
      opts.kind ?? 'endpoint',
      url,
      opts.events ?? ['contact.created', 'contact.updated'],
      opts.enabled ?? true,
      opts.enabled === false ? 'disabled by its owner' : null,
      opts.failureCount ?? 0,
      secret,
    ],
  );
  return { id: row!.id, secret };
}

let seq = 0;
/** A contact upsert through the public API: emits contact.created (source api) in its transaction. */
export async function upsertContact(t: TestApp, publicKey: string, email = `hook${++seq}-${Date.now()}@example.com`): Promise<string> {
  const res = await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email, firstName: 'Ada' } });
  expect(res.status).toBe(200);
  return email;
}

/** Checks X-Webhook-Signature over the exact bytes received, as a receiver's one-liner does. */
export function expectSigned(req: ReceivedRequest, secret: string): void {
  const expected = createHmac('sha256', secret).update(req.rawBody).digest('hex');
  expect(req.headers['x-webhook-signature']).toBe(expected);
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  event: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

/**
 * Waits until the endpoint's log holds `count` lines, then returns them oldest first. The log line is written after the
 * receiver answered, so once it is there the attempt is over: assertions about what did NOT happen can follow.
 */
export async function waitForLog(t: TestApp, endpointId: string, count: number, timeoutMs = 15_000): Promise<AttemptRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await t.sql<AttemptRow>(
      `select id, delivery_id, endpoint_id, event, attempt, outcome, status_code, response_body, error, next_attempt_at, created_at
       from webhook_attempts where endpoint_id = ? order by created_at, attempt`,
      [endpointId],
    );
    if (rows.length >= count) return rows.map((r) => ({ ...r, next_attempt_at: date(r.next_attempt_at), created_at: date(r.created_at)! }));
    if (Date.now() > deadline) throw new Error(`endpoint ${endpointId} has ${rows.length} of ${count} log lines after ${timeoutMs} ms`);
    await sleep(25);
  }
}

export interface DeliveryRow {
  id: string;
  state: string;
  attempts: number;
  manual: boolean;
  replay_of: string | null;
  next_attempt_at: Date | null;
  first_attempt_at: Date | null;
  skip_reason: string | null;
  body: string;
  event_id: string | null;
}

/** The pool returns timestamps as text (as the ORM configures it); tests compare instants. */
const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

export async function deliveriesOf(t: TestApp, endpointId: string): Promise<DeliveryRow[]> {
  const rows = await t.sql<DeliveryRow>(
    `select id, state, attempts, manual, replay_of, next_attempt_at, first_attempt_at, skip_reason, body, event_id
     from webhook_deliveries where endpoint_id = ? order by created_at, id`,
    [endpointId],
  );
  return rows.map((r) => ({ ...r, next_attempt_at: date(r.next_attempt_at), first_attempt_at: date(r.first_attempt_at) }));
}

export async function endpointRow(t: TestApp, id: string) {
  const [row] = await t.sql<{ enabled: boolean; disabled_reason: string | null; failure_count: number }>(
    'select enabled, disabled_reason, failure_count from webhook_endpoints where id = ?',
    [id],
  );
  return row;
}
