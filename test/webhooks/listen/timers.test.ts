/**
 * The listen hub's timers run on the server clock: heartbeats, the refresh of its listener rows and the linger of an
 * organization whose last stream ended. The clock stands still here, so only moving it can fire them.
 */
import { LINGER_MS, listenHubOf, REFRESH_MS } from '#core/webhooks/listen/hub.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { initTestApp, type TestApp } from '../../support/app.ts';
import { openStream } from './support.ts';

let t: TestApp;

beforeAll(async () => {
  t = await initTestApp();
  t.clock.freeze();
});
afterAll(async () => {
  t?.clock.unfreeze();
  await t?.close();
});

const listenerRows = async (orgId: string) =>
  (await t.sql<{ expires_at: string }>('select expires_at from webhook_listeners where organization_id = ?', [orgId])).map((r) =>
    new Date(r.expires_at).getTime(),
  );

describe('the listen hub on the server clock', () => {
  it('sends a heartbeat each WEBHOOK_LISTEN_HEARTBEAT_MS (15 s) of the clock', async () => {
    expect(t.runtime.deps.config.WEBHOOK_LISTEN_HEARTBEAT_MS).toBe(15_000);
    const org = await t.newOrg({ plan: 'max' });
    const s = await openStream(t, org.internalKey);
    try {
      expect(s.heartbeats).toBe(0);
      t.clock.advance(15_000);
      await s.heartbeatsReached(1, 2_000);
      t.clock.advance(15_000);
      await s.heartbeatsReached(2, 2_000);
    } finally {
      s.close();
    }
  });

  it('moves its listener rows on every minute, so they expire only when the process is gone', async () => {
    const org = await t.newOrg({ plan: 'max' });
    const s = await openStream(t, org.internalKey);
    try {
      const [before] = await listenerRows(org.orgId);
      t.clock.advance(REFRESH_MS);
      await vi.waitFor(
        async () => {
          const [row] = await listenerRows(org.orgId);
          expect(row).toBe(before! + REFRESH_MS);
        },
        { timeout: 2_000 },
      );
    } finally {
      s.close();
    }
  });

  it('keeps an organization listened to for 30 s after its last stream ended, then drops its row', async () => {
    const hub = listenHubOf(t.runtime.deps);
    const org = await t.newOrg({ plan: 'max' });
    const s = await openStream(t, org.internalKey);
    s.close();
    await vi.waitFor(() => expect(hub.sessionCount).toBe(0), { timeout: 5_000 });
    t.clock.advance(LINGER_MS - 1);
    // A reconnecting client would still resume: the row (and the kept events) are there.
    expect(await listenerRows(org.orgId)).toHaveLength(1);
    t.clock.advance(1);
    await vi.waitFor(async () => expect(await listenerRows(org.orgId)).toEqual([]), { timeout: 2_000 });
  });
});
