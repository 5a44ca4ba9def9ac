import { CLEANUP_CRON, CLEANUP_QUEUE, cleanupJob } from '#core/jobs/cleanup.ts';
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { finishedJob } from '../support/jobs.ts';

let t: TestApp;
let apiKeyId: string;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  t = await initTestApp();
  const { publicKey } = await t.newOrg();
  // One real request so the key has a rate-limit counter in the current window, as in production.
  await call(t, 'GET', '/contacts/search?email=nobody@example.com', { key: publicKey });
  const [key] = await t.sql<{ id: string }>('select id from api_keys where type = ? limit 1', ['public']);
  apiKeyId = key!.id;
});
afterAll(async () => t?.close());
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});

/** Old and fresh rows on both tables, keyed by label so assertions read as the rules; times are the server clock's. */
async function seed() {
  await t.sql('delete from idempotency_records');
  await t.sql('delete from rate_limit_counters');
  const now = t.clock.now();
  const idem: [string, string][] = [
    ['old-done', `?::timestamptz - interval '25 hours'`],
    ['old-in-progress', `?::timestamptz - interval '3 days'`],
    ['fresh-23h', `?::timestamptz - interval '23 hours'`],
    ['fresh-now', '?::timestamptz'],
  ];
  for (const [label, at] of idem) {
    await t.sql(
      `insert into idempotency_records (api_key_id, key, request_hash, status, response, created_at)
       values (?, ?, 'h', ${label.includes('progress') ? 'null' : '200'}, '{}'::jsonb, ${at})`,
      [apiKeyId, label, now],
    );
  }
  const windows: [string, string][] = [
    ['old-1h', `date_trunc('minute', ?::timestamptz) - interval '1 hour'`],
    ['old-150s', `?::timestamptz - interval '150 seconds'`],
    // Relative to now rather than minute-aligned, so a minute rolling over mid-test cannot flip the expectation.
    ['recent-90s', `?::timestamptz - interval '90 seconds'`],
    ['current', `date_trunc('minute', ?::timestamptz)`],
  ];
  for (const [label, at] of windows) {
    await t.sql(`insert into rate_limit_counters (bucket, window_start, count) values (?, ${at}, 3)`, [label, now]);
  }
}

async function remaining() {
  const idem = await t.sql<{ key: string }>('select key from idempotency_records order by key');
  const rl = await t.sql<{ bucket: string }>('select bucket from rate_limit_counters order by bucket');
  return { idempotency: idem.map((r) => r.key), rateLimits: rl.map((r) => r.bucket) };
}

it('deletes idempotency records older than 24 h and rate-limit windows that have ended, and nothing else', async () => {
  await seed();
  const job = cleanupJob(t.runtime.deps);
  await job.handle(job.parse({}));
  expect(await remaining()).toEqual({
    idempotency: ['fresh-23h', 'fresh-now'],
    rateLimits: ['current', 'recent-90s'],
  });
});

it('works through a backlog larger than one delete slice', async () => {
  await t.sql('delete from idempotency_records');
  await t.sql('delete from rate_limit_counters');
  await t.sql(
    `insert into idempotency_records (api_key_id, key, request_hash, status, created_at)
     select ?, 'k' || g, 'h', 200, ?::timestamptz - interval '2 days' from generate_series(1, 12001) g`,
    [apiKeyId, t.clock.now()],
  );
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count)
     select 'b' || g, ?::timestamptz - interval '1 day', 1 from generate_series(1, 12001) g`,
    [t.clock.now()],
  );
  const job = cleanupJob(t.runtime.deps);
  await job.handle(job.parse({}));
  const [counts] = await t.sql<{ i: number; r: number }>(
    'select (select count(*) from idempotency_records)::int as i, (select count(*) from rate_limit_counters)::int as r',
  );
  expect(counts).toEqual({ i: 0, r: 0 });
});

it('is scheduled hourly in UTC and runs as a queued job on a worker', async () => {
  await t.runtime.boss.work(jobDefinitions(t.runtime.deps));
  const [schedule] = await t.sql<{ cron: string; timezone: string }>('select cron, timezone from pgboss.schedule where name = ?', [
    CLEANUP_QUEUE,
  ]);
  expect(CLEANUP_CRON).toBe('0 * * * *');
  expect(schedule).toEqual({ cron: CLEANUP_CRON, timezone: 'UTC' });

  await seed();
  // What the cron tick sends: the schedule's data, `{}`.
  const id = await t.runtime.boss.boss.send(CLEANUP_QUEUE, {});
  expect(await finishedJob(t, CLEANUP_QUEUE, id!)).toMatchObject({ state: 'completed' });
  expect(await remaining()).toEqual({
    idempotency: ['fresh-23h', 'fresh-now'],
    rateLimits: ['current', 'recent-90s'],
  });
});

it('keeps day windows for the day, and deletes expired sessions, reset tokens, unaccepted invites and old sign-in attempts', async () => {
  const now = t.clock.now();
  await t.sql('delete from rate_limit_counters');
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count) values
       ('key:x:day', date_trunc('day', ?::timestamptz, 'UTC'), 5), ('key:y:day', date_trunc('day', ?::timestamptz, 'UTC') - interval '3 days', 5)`,
    [now, now],
  );
  const [user] = await t.sql<{ id: string; organization_id: string }>('select id, organization_id from users limit 1');
  const org = user!.organization_id;
  for (const [label, expires] of [
    ['old', `?::timestamptz - interval '2 days'`],
    ['live', `?::timestamptz + interval '1 day'`],
  ] as const) {
    await t.sql(`insert into sessions (organization_id, user_id, token_hash, user_epoch, expires_at) values (?, ?, ?, 0, ${expires})`, [
      org,
      user!.id,
      `s-${label}`,
      now,
    ]);
    await t.sql(`insert into password_reset_tokens (user_id, token_hash, expires_at) values (?, ?, ${expires})`, [
      user!.id,
      `r-${label}`,
      now,
    ]);
    await t.sql(
      `insert into invites (organization_id, invited_by_id, email, role, token_hash, expires_at) values (?, ?, ?, 'member', ?, ${expires})`,
      [org, user!.id, `${label}@invite.example`, `i-${label}`, now],
    );
  }
  await t.sql(
    `insert into sign_in_attempts (email, ip, succeeded, created_at) values ('a@x.com', '1.2.3.4', false, ?::timestamptz - interval '2 days'), ('b@x.com', '1.2.3.4', false, ?)`,
    [now, now],
  );
  const job = cleanupJob(t.runtime.deps);
  await job.handle(job.parse({}));
  const left = async (q: string) => (await t.sql<{ v: string }>(q)).map((r) => r.v);
  expect(await left(`select bucket as v from rate_limit_counters where bucket like '%:day' order by 1`)).toEqual(['key:x:day']);
  expect(await left(`select token_hash as v from sessions where token_hash like 's-%'`)).toEqual(['s-live']);
  expect(await left(`select token_hash as v from password_reset_tokens where token_hash like 'r-%'`)).toEqual(['r-live']);
  expect(await left(`select token_hash as v from invites where token_hash like 'i-%'`)).toEqual(['i-live']);
  expect(await left(`select email as v from sign_in_attempts`)).toEqual(['b@x.com']);
});

it('keeps each row until the clock passes its cut-off, to the millisecond', async () => {
  t.clock.freeze();
  const at = t.clock.now();
  const [user] = await t.sql<{ id: string; organization_id: string }>('select id, organization_id from users limit 1');
  const [org, userId] = [user!.organization_id, user!.id];
  await t.sql('delete from idempotency_records');
  await t.sql('delete from rate_limit_counters');
  await t.sql('delete from sign_in_attempts');
  // Each row sits exactly on its cut-off at `at`: kept now, gone one millisecond later.
  await t.sql(
    `insert into idempotency_records (api_key_id, key, request_hash, status, created_at) values (?, 'edge', 'h', 200, ?::timestamptz - interval '24 hours')`,
    [apiKeyId, at],
  );
  await t.sql(
    `insert into rate_limit_counters (bucket, window_start, count) values
       ('edge-minute', ?::timestamptz - interval '2 minutes', 1), ('edge:day', ?::timestamptz - interval '2 days', 1)`,
    [at, at],
  );
  const dayAgo = new Date(at.getTime() - DAY_MS);
  await t.sql(`insert into sessions (organization_id, user_id, token_hash, user_epoch, expires_at) values (?, ?, 's-edge', 0, ?)`, [
    org,
    userId,
    dayAgo,
  ]);
  await t.sql(`insert into password_reset_tokens (user_id, token_hash, expires_at) values (?, 'r-edge', ?)`, [userId, dayAgo]);
  await t.sql(
    `insert into invites (organization_id, invited_by_id, email, role, token_hash, expires_at) values (?, ?, 'edge@invite.example', 'member', 'i-edge', ?)`,
    [org, userId, dayAgo],
  );
  await t.sql(`insert into sign_in_attempts (email, ip, succeeded, created_at) values ('edge@x.com', '1.2.3.4', false, ?)`, [dayAgo]);

  const run = async () => {
    const job = cleanupJob(t.runtime.deps);
    await job.handle(job.parse({}));
    const [n] = await t.sql<Record<string, number>>(
      `select (select count(*) from idempotency_records where key = 'edge')::int as idempotency,
         (select count(*) from rate_limit_counters where bucket like 'edge%')::int as windows,
         (select count(*) from sessions where token_hash = 's-edge')::int as sessions,
         (select count(*) from password_reset_tokens where token_hash = 'r-edge')::int as resets,
         (select count(*) from invites where token_hash = 'i-edge')::int as invites,
         (select count(*) from sign_in_attempts where email = 'edge@x.com')::int as attempts`,
    );
    return n;
  };
  expect(await run()).toEqual({ idempotency: 1, windows: 2, sessions: 1, resets: 1, invites: 1, attempts: 1 });
  t.clock.advance(1);
  expect(await run()).toEqual({ idempotency: 0, windows: 0, sessions: 0, resets: 0, invites: 0, attempts: 0 });
});

it('sets drifted contact counters back to the live count', async () => {
  const { orgId, publicKey } = await t.newOrg();
  await call(t, 'POST', '/contacts/batch-upsert', {
    key: publicKey,
    body: { contacts: [{ email: 'a@drift.example' }, { email: 'b@drift.example' }] },
  });
  await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'c@drift.example' } });
  const count = async () =>
    (await t.sql<{ n: number }>('select contact_count as n from contact_counters where organization_id = ?', [orgId]))[0]!.n;
  expect(await count()).toBe(3);
  await t.sql('update contact_counters set contact_count = 42 where organization_id = ?', [orgId]);
  const job = cleanupJob(t.runtime.deps);
  await job.handle(job.parse({}));
  expect(await count()).toBe(3);
});

it('gives an organization whose contact counter row is missing one with the live count', async () => {
  const { orgId, publicKey } = await t.newOrg();
  await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'a@lost-counter.example' } });
  await t.sql('delete from contact_counters where organization_id = ?', [orgId]);
  const job = cleanupJob(t.runtime.deps);
  await job.handle(job.parse({}));
  expect(await t.sql('select contact_count from contact_counters where organization_id = ?', [orgId])).toEqual([{ contact_count: 1 }]);
});
