import { ADJUST_SCORE_QUEUE, adjustContactScore, adjustScoreJob } from '#core/contacts/shared/adjust-score-job.ts';
import type { ContactRow } from '#core/contacts/shared/row.ts';
import type { Logger } from '@leadwire/core';
import type { JobDefinition } from '#core/jobs/boss.ts';
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { noAdjustment } from '#core/scoring/adjuster.ts';
import { answer, replyJson, startOpenAiStub, type OpenAiStub } from '#core/scoring/openai-stub.test-support.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { finishedJob, queuedJobIds, runQueuedJobs } from '../support/jobs.ts';

const API_KEY = 'sk-adjuster-secret-5f1e2d3c4b5a';

/** A logger that keeps every line, so tests can assert on what was (and was not) logged. */
function captureLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (obj: object, msg?: string) => void lines.push(JSON.stringify({ ...obj, msg }));
  return { lines, info: keep, warn: keep, error: keep, debug: keep };
}

async function contactRow(t: TestApp, id: string): Promise<ContactRow> {
  const [row] = await t.sql<ContactRow>('select * from contacts where id = ?', [id]);
  if (!row) throw new Error(`contact ${id} not found`);
  return row;
}

/** The score changes the adjustment job made (the upsert may report its own, with source api). */
/** The contact once every adjustment job queued for it has run (each must complete: a failed adjuster is not a failed job). */
async function afterItsJobs(t: TestApp, contactId: string): Promise<ContactRow> {
  const ids = await queuedJobIds(t, ADJUST_SCORE_QUEUE, { contactIds: [contactId] });
  expect(ids.length).toBeGreaterThan(0);
  for (const id of ids) expect(await finishedJob(t, ADJUST_SCORE_QUEUE, id)).toMatchObject({ state: 'completed' });
  return contactRow(t, contactId);
}

/** Runs the queued adjustment jobs at once, as a worker would, and returns the contact; one of them must be about it. */
async function adjustedNow(t: TestApp, def: JobDefinition, contactId: string): Promise<ContactRow> {
  const queued = await queuedJobIds(t, ADJUST_SCORE_QUEUE, { contactIds: [contactId] }, { waiting: true });
  const ran = await runQueuedJobs(t, def);
  expect(ran).toEqual(expect.arrayContaining(queued));
  expect(queued.length).toBeGreaterThan(0);
  return contactRow(t, contactId);
}

async function scoreEvents(t: TestApp, contactId: string) {
  return t.sql<{ payload: any }>(
    `select payload from outbox_events
     where event = 'contact.score_changed' and payload->>'source' = 'ai' and payload->'data'->'contact'->>'id' = ?
     order by created_at`,
    [contactId],
  );
}

async function queuedJobs(t: TestApp): Promise<number> {
  const [row] = await t.sql<{ n: number }>('select count(*)::int as n from pgboss.job where name = ?', [ADJUST_SCORE_QUEUE]);
  return row?.n ?? 0;
}

describe('with a score adjuster configured', () => {
  let t: TestApp;
  let stub: OpenAiStub;
  let key: string;
  let orgId: string;
  let adjuster: JobDefinition;
  const log = captureLog();

  // No worker runs here but in the first test: the others run the queued job at once, as a worker would.
  beforeAll(async () => {
    stub = await startOpenAiStub();
    t = await initTestApp({ SCORE_ADJUSTER_URL: stub.baseUrl, SCORE_ADJUSTER_API_KEY: API_KEY, SCORE_ADJUSTER_MODEL: 'stub-model' });
    adjuster = jobDefinitions({ ...t.runtime.deps, log }).find((d) => d.queue === ADJUST_SCORE_QUEUE)!;
    ({ publicKey: key, orgId } = await t.newOrg());
  });
  afterAll(async () => {
    await t?.close();
    await stub?.close();
  });
  beforeEach(() => {
    stub.requests = [];
    stub.handler = answer(0);
    log.lines.length = 0;
  });

  it('queues the job with the upsert; a worker runs it and stores base + adjustment, emitting contact.score_changed from ai', async () => {
    await t.runtime.boss.work([adjuster]);
    onTestFinished(() => t.runtime.boss.boss.offWork(ADJUST_SCORE_QUEUE));
    stub.handler = answer(7);
    const before = await queuedJobs(t);
    // email 15 + phone 10 + job title 10 = 35
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'ada@example.com', phone: '+336', title: 'CTO' } });
    expect(r.status).toBe(200);
    const id: string = r.body.id;
    expect(await queuedJobs(t)).toBe(before + 1);

    const row = await afterItsJobs(t, id);
    expect(row.lead_score).toBe(42);
    expect(row.score_adjustment).toBe(7);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.body?.model).toBe('stub-model');

    const s = await call(t, 'GET', '/contacts/search?email=ada@example.com', { key });
    expect(s.body.leadScore).toBe(42);

    const events = await scoreEvents(t, id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({
      event: 'contact.score_changed',
      source: 'ai',
      data: { contact: { id, email: 'ada@example.com', leadScore: 42 } },
    });
  });

  it('bounds an out-of-range answer to +15', async () => {
    stub.handler = answer(60);
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'big@example.com' } });
    const row = await adjustedNow(t, adjuster, r.body.id);
    expect(row.score_adjustment).toBe(15);
    expect(row.lead_score).toBe(15 + 15);
  });

  it('keeps a manual override: the adjustment is stored but the score and its events stay put', async () => {
    stub.handler = answer(10);
    const r = await call(t, 'POST', '/leads', { key, body: { email: 'manual@example.com', score: 80 } });
    expect(r.status).toBe(200);
    const id: string = r.body.id;
    const row = await adjustedNow(t, adjuster, id);
    expect(row.score_adjustment).toBe(10);
    expect(row.score_override).toBe(80);
    expect(row.lead_score).toBe(80);
    expect(await scoreEvents(t, id)).toHaveLength(0);
  });

  it('falls back to 0 when the adjuster fails, and logs the failure without the api key', async () => {
    stub.handler = answer(5);
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'flaky@example.com' } });
    const id: string = r.body.id;
    expect((await adjustedNow(t, adjuster, id)).score_adjustment).toBe(5);

    // A gateway that reflects the request headers into its error page.
    stub.handler = (req, res) => replyJson(res, 502, JSON.stringify({ error: 'bad gateway', echoed: req.headers.authorization }));
    await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'flaky@example.com', phone: '+331' } });
    const row = await adjustedNow(t, adjuster, id);
    expect(row.score_adjustment).toBe(0);
    expect(row.lead_score).toBe(15 + 10);
    expect(stub.requests.at(-1)?.headers.authorization).toBe(`Bearer ${API_KEY}`);

    const failures = log.lines.filter((l) => l.includes('score adjustment failed'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain('bad gateway');
    expect(log.lines.join('\n')).not.toContain(API_KEY);
    // 15 -> 20 by the first job; the upsert then moves the base and keeps the stale +5 (30); the failed job gives 25.
    const events = await scoreEvents(t, id);
    expect(events.map((e) => e.payload.data.contact.leadScore)).toEqual([20, 25]);
  });

  it('skips deleted and missing contacts', async () => {
    stub.handler = answer(9);
    const r = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'gone@example.com' } });
    const id: string = r.body.id;
    expect((await adjustedNow(t, adjuster, id)).score_adjustment).toBe(9);
    await t.sql('update contacts set deleted_at = now() where id = ?', [id]);
    stub.requests = [];
    stub.handler = answer(-9);

    const job = adjustScoreJob(t.runtime.deps);
    await job.handle(job.parse({ contactIds: [id, '00000000-0000-4000-8000-000000000000'] }));
    expect(stub.requests).toHaveLength(0);
    expect((await contactRow(t, id)).score_adjustment).toBe(9);
  });

  it('does not store an answer about data that changed while the adjuster was thinking', async () => {
    // Inserted directly, so no queued job of its own runs alongside.
    const [{ id } = { id: '' }] = await t.sql<{ id: string }>(
      `insert into contacts (organization_id, email, lead_score) values (?, 'race@example.com', 15) returning id`,
      [orgId],
    );
    const snapshot = await contactRow(t, id);
    await t.sql(`update contacts set phone = '+449' where id = ?`, [id]);
    const outcome = await adjustContactScore(t.runtime.deps.db, { adjust: async () => 12 }, snapshot, t.clock);
    expect(outcome).toBe('skipped');
    const after = await contactRow(t, id);
    expect(after.score_adjustment).toBe(0);
    expect(after.lead_score).toBe(15);
  });

  it('rejects a malformed payload', () => {
    const job = adjustScoreJob(t.runtime.deps, noAdjustment);
    expect(() => job.parse({ contactIds: ['not-a-uuid'] })).toThrow();
    expect(() => job.parse({})).toThrow();
  });
});

describe('without a score adjuster', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await initTestApp();
    await t.runtime.boss.work(jobDefinitions(t.runtime.deps));
  });
  afterAll(async () => t?.close());

  it('queues no adjustment job and keeps the base score', async () => {
    const { publicKey } = await t.newOrg();
    const r = await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'plain@example.com', title: 'CEO' } });
    expect(r.status).toBe(200);
    expect(await queuedJobs(t)).toBe(0);
    const row = await contactRow(t, r.body.id);
    expect(row.lead_score).toBe(25);
    expect(row.score_adjustment).toBe(0);
  });
});
