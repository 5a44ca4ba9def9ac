/**
 * Issue 19, "What operators see": GET /metrics in Prometheus's text format, read by scraping a real server before and
 * after real requests. Labels are route templates, never paths, organizations or keys.
 */
import { randomUUID } from 'node:crypto';
import { generateKeyValue } from '#core/auth/key-material.ts';
import { mailQueue } from '#core/mail/send-job.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMetricsApp } from '../../apps/server/src/metrics.ts';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { capture } from '../capture/support.ts';
import { collect, VISITOR_A } from '../tracking/support.ts';
import { parseMetrics as parse, type Sample, sampleValue as value } from './prom-text.ts';

let t: TestApp;
let key: string;
let orgId: string;

async function scrape(origin = t.origin, headers: Record<string, string> = {}): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${origin}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parse(text) };
}

beforeAll(async () => {
  t = await initTestApp();
  ({ publicKey: key, orgId } = await t.newOrg());
});
afterAll(async () => t?.close());

describe('GET /metrics', () => {
  it('counts requests by method, route template and status, exactly as made, with their latency', async () => {
    const up = await call(t, 'POST', '/contacts/upsert', { key, body: { email: `metrics-${randomUUID()}@example.com` } });
    expect(up.status).toBe(200);
    const before = (await scrape()).samples;
    const id = up.body.id as string;
    for (let i = 0; i < 3; i++) expect((await call(t, 'GET', `/contacts/${id}`, { key })).status).toBe(200);
    expect((await call(t, 'GET', `/contacts/${randomUUID()}`, { key })).status).toBe(404);
    // Paths nobody serves, one of them a scanner's random one: one label for all, whatever they were.
    expect((await call(t, 'GET', `/no-such/${randomUUID()}`, { key })).status).toBe(404);
    expect((await fetch(`${t.origin}/wp-admin/${randomUUID()}.php`)).status).toBe(404);
    const { text, samples: after } = await scrape();

    const route = '/api/v1/contacts/{id}';
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta('leadwire_http_requests_total', { method: 'GET', route, status: '200' })).toBe(3);
    expect(delta('leadwire_http_requests_total', { method: 'GET', route, status: '404' })).toBe(1);
    expect(delta('leadwire_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    expect(delta('leadwire_http_request_duration_seconds_count', { method: 'GET', route })).toBe(4);
    expect(delta('leadwire_http_request_duration_seconds_bucket', { method: 'GET', route, le: '+Inf' })).toBe(4);
    expect(value(after, 'leadwire_http_request_duration_seconds_sum', { method: 'GET', route })).toBeGreaterThan(0);
    // Fastify's own routes are labelled by their templates too; the first scrape counted itself.
    expect(delta('leadwire_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);

    // Nothing that names a contact, an organization or a key, and no raw path.
    expect(text).not.toContain(id);
    expect(text).not.toContain(orgId);
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(0, 16));
    expect(text).not.toContain('wp-admin');
    expect(text).not.toContain('no-such');
    const routes = new Set(after.filter((s) => s.name === 'leadwire_http_requests_total').map((s) => s.labels.route));
    for (const r of routes) expect(r === 'unmatched' || !/[0-9a-f]{8}-[0-9a-f]{4}-/.test(r!)).toBe(true);
  });

  it('reports the outbox backlog and the age of its oldest pending event, as the table holds them', async () => {
    // No dispatcher runs in this server: events stay pending. Only subscribed events are queued (issue 19).
    await t.sql(`insert into webhook_endpoints (organization_id, kind, url, events, secret) values (?, 'endpoint', ?, ?::text[], ?)`, [
      orgId,
      'https://receiver.invalid/backlog',
      ['contact.created'],
      'whsec_backlog',
    ]);
    const before = (await scrape()).samples;
    for (let i = 0; i < 2; i++) {
      expect((await call(t, 'POST', '/contacts/upsert', { key, body: { email: `backlog-${randomUUID()}@example.com` } })).status).toBe(200);
    }
    // Frozen, so the age the scrape computed and the one computed here are at the same instant.
    t.clock.freeze();
    t.clock.advance(90_000);
    const scrapedAt = t.clock.now();
    const after = await scrape()
      .then((r) => r.samples)
      .finally(() => t.clock.unfreeze());
    const [row] = await t.sql<{ n: number; oldest: Date }>('select count(*)::int as n, min(created_at) as oldest from outbox_pending');
    expect(row!.n).toBeGreaterThan(0);
    expect(value(after, 'leadwire_outbox_pending', {})).toBe(row!.n);
    // Each upsert of a new contact writes one contact.created.
    expect(value(after, 'leadwire_outbox_pending', {}) - value(before, 'leadwire_outbox_pending', {})).toBe(2);
    expect(value(after, 'leadwire_outbox_oldest_pending_age_seconds', {})).toBeCloseTo(
      (scrapedAt.getTime() - new Date(row!.oldest).getTime()) / 1000,
      1,
    );
    expect(value(after, 'leadwire_outbox_oldest_pending_age_seconds', {})).toBeGreaterThanOrEqual(90);
    expect(value(after, 'leadwire_database_up', {})).toBe(1);

    await t.sql('delete from outbox_pending');
    const empty = (await scrape()).samples;
    expect(value(empty, 'leadwire_outbox_pending', {})).toBe(0);
    expect(value(empty, 'leadwire_outbox_oldest_pending_age_seconds', {})).toBe(0);
  });

  it('reports the request pool: connections in use and idle, callers waiting', async () => {
    const { samples } = await scrape();
    const stats = t.runtime.deps.db.poolStats();
    expect(value(samples, 'leadwire_db_pool_waiting', { pool: 'request' })).toBe(0);
    // The scrape's own statement has released its connection by the time the text is written.
    expect(value(samples, 'leadwire_db_pool_connections', { pool: 'request', state: 'in_use' })).toBe(0);
    expect(value(samples, 'leadwire_db_pool_connections', { pool: 'request', state: 'idle' })).toBe(stats.idle);
    expect(stats.idle).toBeGreaterThan(0);
  });

  it('counts refusals by reason: a key the database did not find is refused from memory next time', async () => {
    const before = (await scrape()).samples;
    const unknown = generateKeyValue();
    expect((await call(t, 'GET', '/contacts', { key: unknown })).status).toBe(401);
    expect((await call(t, 'GET', '/contacts', { key: unknown })).status).toBe(401);
    const { text, samples: after } = await scrape();
    expect(
      value(after, 'leadwire_refusals_total', { reason: 'known_bad_key' }) -
        value(before, 'leadwire_refusals_total', { reason: 'known_bad_key' }),
    ).toBe(1);
    expect(text).not.toContain(unknown.slice(8, 20));
  });
});

describe('rate-limit refusals', () => {
  it('counts each refusal of a spent window, the first (counted in the database) and those answered from memory', async () => {
    const org = await t.newOrg({ plan: 'starter' });
    t.clock.freeze(t.clock.now());
    try {
      const get = () => fetch(`${t.origin}/api/contacts`, { headers: { authorization: `Bearer ${org.internalKey}` } });
      // The starter plan's Internal key: 60 a minute. The window is spent by the 61st.
      const answers: number[] = [];
      for (let i = 0; i < 60; i++) answers.push((await get()).status);
      expect(answers.every((s) => s === 200)).toBe(true);
      const before = (await scrape()).samples;
      expect((await get()).status).toBe(429);
      expect((await get()).status).toBe(429);
      expect((await get()).status).toBe(429);
      const { text, samples: after } = await scrape();
      expect(
        value(after, 'leadwire_refusals_total', { reason: 'rate_limited' }) -
          value(before, 'leadwire_refusals_total', { reason: 'rate_limited' }),
      ).toBe(3);
      expect(text).not.toContain(org.orgId);
    } finally {
      t.clock.unfreeze();
    }
  });
});

describe('job queues', () => {
  it('reports per pg-boss queue the jobs due and how long the oldest has waited (no worker runs in this server)', async () => {
    const queue = mailQueue.name;
    const before = (await scrape()).samples;
    expect(before.some((s) => s.name === 'leadwire_queue_ready_jobs' && s.labels.queue === queue)).toBe(true);
    const base = value(before, 'leadwire_queue_ready_jobs', { queue });
    const { jobs, db } = t.runtime.deps;
    const mail = { to: 'nobody@example.com', subject: 'Hi', text: 'Hi', template: 'invite', link: 'https://example.com/' } as const;
    await mailQueue.send(jobs, db, mail);
    await mailQueue.send(jobs, db, mail);
    // Not due yet: not counted as waiting.
    await mailQueue.send(jobs, db, mail, { startAfter: new Date(t.clock.now().getTime() + 3_600_000) });
    t.clock.advance(120_000);
    const after = (await scrape()).samples;
    expect(value(after, 'leadwire_queue_ready_jobs', { queue }) - base).toBe(2);
    expect(value(after, 'leadwire_queue_lag_seconds', { queue })).toBeGreaterThanOrEqual(119);
    await t.sql(`delete from pgboss.job where name = ?`, [queue]);
    const empty = (await scrape()).samples;
    expect(value(empty, 'leadwire_queue_ready_jobs', { queue })).toBe(0);
    expect(value(empty, 'leadwire_queue_lag_seconds', { queue })).toBe(0);
  });
});

describe('page views and capture submissions', () => {
  it('counts each accepted, and each refused by the error code it was given', async () => {
    const before = (await scrape()).samples;
    const view = { org: orgId, url: 'https://shop.example/pricing', visitor: VISITOR_A };
    expect((await collect(t, view)).status).toBe(202);
    expect((await collect(t, view)).status).toBe(202);
    expect((await collect(t, view, { 'content-type': 'image/png' })).status).toBe(415);
    expect((await capture(t, orgId, { name: 'Ada Lovelace', email: `ada-${randomUUID()}@example.com` })).status).toBe(200);
    const nobody = randomUUID();
    const refused = await capture(t, nobody, { email: 'x@example.com' });
    expect(refused.status).toBe(404);
    const { text, samples: after } = await scrape();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta('leadwire_page_views_total', { outcome: 'accepted' })).toBe(2);
    expect(delta('leadwire_page_views_total', { outcome: 'refused', reason: 'unsupported_media_type' })).toBe(1);
    expect(delta('leadwire_capture_submissions_total', { outcome: 'accepted' })).toBe(1);
    expect(delta('leadwire_capture_submissions_total', { outcome: 'refused', reason: refused.body.code })).toBe(1);
    // The organization is in the capture path, never in a label.
    expect(text).not.toContain(nobody);
    expect(value(after, 'leadwire_http_requests_total', { method: 'POST', route: '/api/capture/:orgId', status: '404' })).toBeGreaterThan(
      0,
    );
  });
});

describe('METRICS_TOKEN and METRICS_PORT', () => {
  it('refuses a scrape without the token, and serves /metrics on its own listener, not on the public port', async () => {
    const token = 'a-metrics-token-of-some-length';
    const s = await initTestApp({ METRICS_TOKEN: token, METRICS_PORT: '0' });
    const listener = await buildMetricsApp(s.runtime.deps, { request: s.runtime.deps.db, jobs: s.runtime.jobDeps.db });
    try {
      await listener.listen({ port: 0, host: '127.0.0.1' });
      const address = listener.server.address();
      const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      // Not on the public port: a path like any unknown one.
      expect((await fetch(`${s.origin}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${token}x`, token, `Basic ${token}`]) {
        const res = await fetch(`${origin}/metrics`, authorization ? { headers: { authorization } } : {});
        expect(res.status).toBe(401);
        // Answered like every other route: the request's id in the body and in x-request-id.
        const body = await res.json();
        expect(body).toMatchObject({ code: 'unauthorized', requestId: expect.any(String) });
        expect(res.headers.get('x-request-id')).toBe(body.requestId);
      }
      const named = await fetch(`${origin}/metrics`, { headers: { 'x-request-id': 'scrape-42' } });
      expect([named.status, (await named.json()).requestId, named.headers.get('x-request-id')]).toEqual([401, 'scrape-42', 'scrape-42']);
      // The scheme is case-insensitive (RFC 7235), as on /v1.
      for (const scheme of ['bearer', 'BEARER']) {
        expect((await fetch(`${origin}/metrics`, { headers: { authorization: `${scheme} ${token}` } })).status, scheme).toBe(200);
      }
      const { samples } = await scrape(origin, { authorization: `Bearer ${token}` });
      expect(value(samples, 'leadwire_db_pool_waiting', { pool: 'jobs' })).toBe(0);
      expect(samples.some((x) => x.name === 'leadwire_db_pool_connections' && x.labels.pool === 'request')).toBe(true);
    } finally {
      await listener.close();
      await s.close();
    }
  });

  it('METRICS_ENABLED=false serves no /metrics', async () => {
    const s = await initTestApp({ METRICS_ENABLED: 'false' });
    try {
      expect((await fetch(`${s.origin}/metrics`)).status).toBe(404);
    } finally {
      await s.close();
    }
  });
});
