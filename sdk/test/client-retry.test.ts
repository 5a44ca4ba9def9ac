/**
 * Retries of the /v1 client against a real server: a real 429 from a key whose 600 requests of the minute are spent
 * (waited out by moving the server's clock, never the wall clock), 5xx and dropped connections through a real local
 * server in front of the API, time-outs, and one Idempotency-Key across all the attempts of a write.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '@leadwire/core';
import { freshMinute, windowStart } from '../../test/support/bursts.ts';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { wait } from '../src/client/http.ts';
import { createClient, DEFAULTS, LeadwireError } from '../src/index.ts';
import { type Behaviour, closedPort, recordingFetch, startFlakyServer } from './client-support.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg();
});
afterAll(async () => t?.close());

const email = () => `retry-${randomUUID()}@example.com`;
const contactsWith = (e: string) => t.sql('select id from contacts where organization_id = ? and email = ?', [org.orgId, e]);

/** A sleep that waits for nothing and records what the client asked for. */
function recordingSleep(onSleep: (ms: number) => void = () => {}) {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms: number) => {
      delays.push(ms);
      onSleep(ms);
    },
  };
}

/** Runs `body` with a flaky server in front of the API that behaves as `plan` says, and closes it afterwards. */
async function withFlaky<T>(
  plan: (n: number) => Behaviour,
  body: (f: Awaited<ReturnType<typeof startFlakyServer>>) => Promise<T>,
): Promise<T> {
  const flaky = await startFlakyServer(`${t.origin}/api`, plan);
  try {
    return await body(flaky);
  } finally {
    await flaky.close();
  }
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('the call succeeded'),
    (e: unknown) => e as LeadwireError,
  );

/**
 * A key whose 600 requests of a fresh minute are spent, set in the counters: the server's own tests
 * (test/api/rate-limit.test.ts) spend a window request by request; what these tests hold is the client's side of it.
 */
async function spentKey(permissions = ['contacts:read']): Promise<string> {
  const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'spent', type: 'public', permissions });
  freshMinute(t.clock);
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count) select 'key:' || id, ?, 600 from api_keys where key_hash = ?`,
    [windowStart(t.clock, 'minute'), hashKey(key)],
  );
  return key;
}

describe('429: a real rate limit', () => {
  it('waits the retry-after of a spent key (moving the server clock past the window) and then succeeds; a write keeps its Idempotency-Key', async () => {
    const key = await spentKey(['contacts:read', 'contacts:write']);
    const plain = createClient({ baseUrl: `${t.origin}/api`, apiKey: key, maxRetries: 0 });
    const limited = await rejection(plain.contacts.search({ email: email() }));
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(limited.retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfter).toBeLessThanOrEqual(60);
    expect(limited.requestId).toBeTruthy();

    // The client sleeps exactly retry-after; the test's sleep moves the server's clock by that much instead of waiting.
    const rec = recordingFetch();
    const { delays, sleep } = recordingSleep((ms) => t.clock.advance(ms));
    const lw = createClient({ baseUrl: `${t.origin}/api`, apiKey: key, fetch: rec.fetch, sleep });
    const e = email();
    const result = await lw.contacts.upsert({ email: e });
    expect(result.created).toBe(true);
    expect(rec.exchanges.map((x) => x.status)).toEqual([429, 200]);
    expect(delays).toHaveLength(1);
    expect(delays[0]! % 1000).toBe(0);
    expect(delays[0]).toBeGreaterThanOrEqual(1000);
    expect(delays[0]).toBeLessThanOrEqual(60_000);
    expect(new Set(rec.exchanges.map((x) => x.idempotencyKey)).size).toBe(1);
    expect(rec.exchanges[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(await contactsWith(e)).toHaveLength(1);
  });

  it('gives up after maxRetries and throws the 429 with retryAfter', async () => {
    const key = await spentKey();
    const rec = recordingFetch();
    // The clock is left alone: every attempt is refused, and the waits are each the server's retry-after.
    const { delays, sleep } = recordingSleep();
    const lw = createClient({ baseUrl: `${t.origin}/api`, apiKey: key, fetch: rec.fetch, sleep, maxRetries: 3 });
    const err = await rejection(lw.contacts.search({ email: email() }));
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(rec.exchanges.map((x) => x.status)).toEqual([429, 429, 429, 429]);
    expect(delays).toHaveLength(3);
    // Each wait is the retry-after of the answer before it.
    expect(delays).toEqual(rec.exchanges.slice(0, 3).map((x) => Number(x.retryAfter) * 1000));
    expect(err.retryAfter).toBe(Number(rec.exchanges[3]!.retryAfter));
    expect(delays.every((ms) => ms >= 1000 && ms <= 60_000)).toBe(true);
  });

  it('cancels the wait for retry-after as soon as the caller aborts', async () => {
    const key = await spentKey();
    const rec = recordingFetch();
    const ctrl = new AbortController();
    let waiting: number | undefined;
    // The client's own timer (wait), observed: it is handed the call's signal.
    const sleep = (ms: number, signal?: AbortSignal) => {
      waiting = ms;
      expect(signal).toBe(ctrl.signal);
      const pending = wait(ms, signal);
      ctrl.abort(new Error('interrupted'));
      return pending;
    };
    const lw = createClient({ baseUrl: `${t.origin}/api`, apiKey: key, fetch: rec.fetch, sleep });
    const err = await lw.contacts.search({ email: email() }, { signal: ctrl.signal }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('interrupted');
    expect(waiting).toBeGreaterThanOrEqual(1000);
    expect(rec.exchanges.map((x) => x.status)).toEqual([429]);
  });
});

describe('5xx, dropped connections and time-outs', () => {
  it('retries a 502 from a proxy with backoff and full jitter, then succeeds, sending one Idempotency-Key throughout', async () => {
    await withFlaky(
      (n) => (n < 2 ? 'bad-gateway' : 'pass'),
      async (flaky) => {
        const rec = recordingFetch();
        const { delays, sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, fetch: rec.fetch, sleep });
        const e = email();
        expect((await lw.contacts.upsert({ email: e })).created).toBe(true);
        expect(rec.exchanges.map((x) => x.status)).toEqual([502, 502, 200]);
        expect(new Set(rec.exchanges.map((x) => x.idempotencyKey)).size).toBe(1);
        // Full jitter: retry n waits a random time below base * 2^n.
        expect(delays).toHaveLength(2);
        expect(delays[0]).toBeGreaterThanOrEqual(0);
        expect(delays[0]).toBeLessThan(DEFAULTS.backoffBaseMs);
        expect(delays[1]).toBeLessThan(DEFAULTS.backoffBaseMs * 2);
        expect(await contactsWith(e)).toHaveLength(1);
      },
    );
  });

  it('throws the last 5xx as unexpected_response (status 502) when every attempt fails; maxRetries 0 sends once', async () => {
    await withFlaky(
      () => 'bad-gateway',
      async (flaky) => {
        const { sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep });
        expect(await rejection(lw.contacts.search({ email: email() }))).toMatchObject({ status: 502, code: 'unexpected_response' });
        expect(flaky.requests()).toBe(1 + DEFAULTS.maxRetries);
        const once = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep, maxRetries: 0 });
        await rejection(once.contacts.search({ email: email() }));
        expect(flaky.requests()).toBe(2 + DEFAULTS.maxRetries);
      },
    );
  });

  it('retries a dropped connection (network_error), then succeeds', async () => {
    await withFlaky(
      (n) => (n === 0 ? 'reset' : 'pass'),
      async (flaky) => {
        const { delays, sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep });
        const e = email();
        await lw.contacts.upsert({ email: e });
        expect(delays).toHaveLength(1);
        expect(flaky.forwardedKeys).toHaveLength(1);
        expect(await contactsWith(e)).toHaveLength(1);
      },
    );
  });

  it('throws network_error with status 0 when nothing listens, after every attempt', async () => {
    const rec = recordingFetch();
    const { delays, sleep } = recordingSleep();
    const lw = createClient({ baseUrl: `http://127.0.0.1:${await closedPort()}/api`, apiKey: org.publicKey, fetch: rec.fetch, sleep });
    const err = await rejection(lw.contacts.upsert({ email: email() }));
    expect(err).toMatchObject({ status: 0, code: 'network_error' });
    expect(err.requestId).toBeUndefined();
    expect(err.cause).toBeInstanceOf(Error);
    expect(rec.exchanges).toHaveLength(1 + DEFAULTS.maxRetries);
    expect(delays).toHaveLength(DEFAULTS.maxRetries);
  });

  it('times out an attempt that gets no answer and retries it', async () => {
    await withFlaky(
      (n) => (n === 0 ? 'hang' : 'pass'),
      async (flaky) => {
        const { delays, sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep, timeoutMs: 200 });
        const e = email();
        expect((await lw.contacts.upsert({ email: e })).created).toBe(true);
        expect(flaky.requests()).toBe(2);
        expect(delays).toHaveLength(1);
      },
    );
  });

  it('throws timeout with status 0 when no attempt is answered in time', async () => {
    await withFlaky(
      () => 'hang',
      async (flaky) => {
        const { sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep, maxRetries: 1, timeoutMs: 200 });
        const err = await rejection(lw.contacts.search({ email: email() }));
        expect(err).toMatchObject({ status: 0, code: 'timeout' });
        expect(err.message).toMatch(/200 ms/);
        expect(flaky.requests()).toBe(2);
      },
    );
  });

  it('a write whose answer was lost is retried with the same key: the server replays it, nothing is applied twice', async () => {
    await withFlaky(
      (n) => (n === 0 ? 'lose-answer' : 'pass'),
      async (flaky) => {
        const { id } = await createClient({ baseUrl: `${t.origin}/api`, apiKey: org.publicKey }).contacts.upsert({ email: email() });
        const { sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep, timeoutMs: 500 });
        const note = await lw.contacts.addNote(id, { body: 'Only once' });
        expect(note.contactId).toBe(id);
        expect(flaky.forwardedKeys).toHaveLength(2);
        expect(flaky.forwardedKeys[0]).toBe(flaky.forwardedKeys[1]);
        expect(await t.sql('select id from notes where contact_id = ?', [id])).toEqual([{ id: note.id }]);
      },
    );
  });

  it('retries 409 idempotency_in_progress while an earlier attempt of the write holds its key, then gets the write done once', async () => {
    const key = `held-${randomUUID()}`;
    const [apiKey] = await t.sql<{ id: string }>('select id from api_keys where key_hash = ?', [hashKey(org.publicKey)]);
    // The lock the server holds while a request runs under a key: held here as if an earlier attempt were still running.
    const holder = new pg.Client({ connectionString: t.runtime.deps.config.DATABASE_URL! });
    await holder.connect();
    try {
      const lockKey = [`idempotency:${apiKey!.id}:${key}`];
      await holder.query(`select pg_advisory_lock(hashtextextended($1, 0))`, lockKey);
      const delays: number[] = [];
      // The earlier attempt ends during the wait: the lock is released before the retry goes out.
      const sleep = async (ms: number) => {
        delays.push(ms);
        await holder.query(`select pg_advisory_unlock(hashtextextended($1, 0))`, lockKey);
      };
      const rec = recordingFetch();
      const address = email();
      const result = await createClient({ baseUrl: `${t.origin}/api`, apiKey: org.publicKey, fetch: rec.fetch, sleep }).contacts.upsert(
        { email: address },
        { idempotencyKey: key },
      );
      expect(result).toMatchObject({ created: true });
      expect(rec.exchanges.map((e) => [e.status, e.idempotencyKey])).toEqual([
        [409, key],
        [200, key],
      ]);
      expect(delays).toHaveLength(1);
      expect(await contactsWith(address)).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });

  it('stops at once when the caller aborts: no retry, the signal’s reason is thrown', async () => {
    await withFlaky(
      () => 'hang',
      async (flaky) => {
        const { delays, sleep } = recordingSleep();
        const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep });
        const ctrl = new AbortController();
        const pending = lw.contacts.upsert({ email: email() }, { signal: ctrl.signal }).catch((e: unknown) => e);
        while (flaky.requests() === 0) await new Promise((r) => setImmediate(r));
        ctrl.abort(new Error('stopped by the caller'));
        const err = await pending;
        expect(err).not.toBeInstanceOf(LeadwireError);
        expect((err as Error).message).toBe('stopped by the caller');
        expect(delays).toEqual([]);
        expect(flaky.requests()).toBe(1);
      },
    );
  });
});
