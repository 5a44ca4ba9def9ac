import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { runCleanup } from '#core/jobs/cleanup.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg } from '../internal/contacts-support.ts';
import { capture, footprint } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

describe('100 lead captures per hour per workspace', () => {
  it('refuses the 101st of the hour with 429 and retry-after, keeps nothing of it, and opens again with the next hour', async () => {
    const org = await newTestOrg(t);
    const other = await newTestOrg(t);
    t.clock.freeze(new Date('2031-03-04T10:20:00.000Z'));
    try {
      for (let i = 0; i < 100; i++) {
        const r = await capture(t, org.orgId, { email: `lead${i % 5}@example.com` });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
      const before = await footprint(t, org.orgId);
      t.clock.advance(39 * 60_000 + 59_000); // 10:59:59
      // The hourly clean-up that runs meanwhile keeps a window still in use.
      await runCleanup(t.runtime.deps.db, t.clock.now());
      const refused = await capture(t, org.orgId, { email: 'late@example.com' });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited' });
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('access-control-allow-origin')).toBe('*');
      expect(refused.headers.get('access-control-expose-headers')).toContain('retry-after');
      expect(await footprint(t, org.orgId)).toEqual(before);
      // Another workspace has its own hundred; a bot's honeypot answer still looks like a success.
      expect((await capture(t, other.orgId, { email: 'other@example.com' })).status).toBe(200);
      expect((await capture(t, org.orgId, { email: 'bot@example.com', _hp_field: 'x' })).status).toBe(200);

      t.clock.advance(1_000); // 11:00:00, a new hour
      const next = await capture(t, org.orgId, { email: 'late@example.com' });
      expect(next.status).toBe(200);
      expect(next.headers.get('x-ratelimit-remaining')).toBe('99');
      // Counted in PostgreSQL, where every server process counts.
      const windows = await t.sql<{ window_start: Date; count: number }>(
        `select window_start, count from rate_limit_counters where bucket = ? order by window_start`,
        [`capture:${org.orgId}`],
      );
      expect(windows.map((w) => [new Date(w.window_start).toISOString(), w.count])).toEqual([
        ['2031-03-04T10:00:00.000Z', 101],
        ['2031-03-04T11:00:00.000Z', 1],
      ]);
      // Two hours after its end a window is cleaned up.
      t.clock.advance(2 * 3_600_000 + 1_000);
      await runCleanup(t.runtime.deps.db, t.clock.now());
      expect(
        await t.sql(`select 1 from rate_limit_counters where bucket = ? and window_start < ?`, [
          `capture:${org.orgId}`,
          new Date('2031-03-04T11:00:00.000Z'),
        ]),
      ).toEqual([]);
    } finally {
      t.clock.unfreeze();
    }
  });
});

describe('the script', () => {
  it('is served at /api/embed/lead-capture.js and, for older installs, /embed/lead-capture.js: the same bytes', async () => {
    const [current, older] = await Promise.all(
      ['/api/embed/lead-capture.js', '/embed/lead-capture.js'].map((p) =>
        fetch(`${t.origin}${p}`, { headers: { 'accept-encoding': 'identity' } }),
      ),
    );
    for (const r of [current!, older!]) {
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
    }
    const [a, b] = [Buffer.from(await current!.arrayBuffer()), Buffer.from(await older!.arrayBuffer())];
    expect(a.length).toBeGreaterThan(1000);
    expect(b.equals(a)).toBe(true);
    expect(older!.headers.get('etag')).toBe(current!.headers.get('etag'));
    expect(a.toString('utf8')).toContain('data-leadwire-lead-capture');

    // Gzipped as served (read undecoded): within the 5,000-byte budget.
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const req = request(`${t.origin}/api/embed/lead-capture.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        expect(res.headers['content-encoding']).toBe('gzip');
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve(Buffer.concat(parts)));
      });
      req.on('error', reject);
      req.end();
    });
    expect(raw.length).toBeLessThanOrEqual(5000);
    expect(gunzipSync(raw).equals(a)).toBe(true);
  });
});
