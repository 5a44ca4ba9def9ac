/**
 * contacts.batchUpsert against a real server: any number of rows in chunks of 100, bounded concurrency, one result
 * per row in input order, progress per chunk, deterministic chunk keys, and what a chunk failing as a whole does.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { type BatchProgress, type ContactUpsertInput, createClient, LeadwireError } from '../src/index.ts';
import { recordingFetch, startFlakyServer } from './client-support.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg({ plan: 'pro' });
});
afterAll(async () => t?.close());

const noWait = async () => {};
const rowsOf = (n: number, tag = randomUUID().slice(0, 8)): ContactUpsertInput[] =>
  Array.from({ length: n }, (_, i) => ({ email: `b${i}-${tag}@example.com`, firstName: `Row ${i}` }));
const client = (opts: Partial<Parameters<typeof createClient>[0]> = {}) =>
  createClient({ baseUrl: `${t.origin}/api`, apiKey: org.publicKey, sleep: noWait, ...opts });

describe('contacts.batchUpsert', () => {
  it('upserts 250 rows with bad ones among them: 3 requests, one result per row in input order, progress after each chunk', async () => {
    const tag = randomUUID().slice(0, 8);
    const rows = rowsOf(250, tag);
    rows[3] = { email: 'not-an-email' };
    rows[120] = { firstName: 'No', lastName: 'Identity' };
    rows[249] = { email: `late-${tag}@example.com`, companyDomain: `missing-${tag}.com` };
    // The same contact twice, in different chunks: the second is an update of the first.
    rows[210] = { email: `b5-${tag}@example.com`, lastName: 'Again' };

    const rec = recordingFetch();
    const progress: BatchProgress[] = [];
    const results = await client({ fetch: rec.fetch }).contacts.batchUpsert(rows, { onProgress: (p) => progress.push(p) });

    expect(rec.exchanges.map((x) => [x.method, new URL(x.url).pathname, x.status])).toEqual(
      Array.from({ length: 3 }, () => ['POST', '/api/v1/contacts/batch-upsert', 200]),
    );
    expect(rec.exchanges.map((x) => JSON.parse(x.body!).contacts.length).sort()).toEqual([100, 100, 50]);
    expect(new Set(rec.exchanges.map((x) => x.idempotencyKey)).size).toBe(3);

    expect(results).toHaveLength(250);
    expect(results.map((r) => r.index)).toEqual(rows.map((_, i) => i));
    expect(results[3]).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', message: expect.any(String), issues: [{ path: 'email' }] },
    });
    expect(results[120]).toMatchObject({ ok: false, error: { code: 'missing_identity', message: expect.any(String) } });
    expect(results[249]).toMatchObject({ ok: false, error: { code: 'company_not_found' } });
    expect(results[0]).toEqual({ index: 0, ok: true, id: expect.any(String), created: true, matchedBy: null });
    const first = results[5]!;
    const again = results[210]!;
    expect(first.ok && again.ok && again.id === first.id).toBe(true);
    expect(results.filter((r) => !r.ok).map((r) => r.index)).toEqual([3, 120, 249]);

    const created = await t.sql('select id from contacts where organization_id = ? and email like ?', [org.orgId, `%-${tag}@example.com`]);
    expect(created).toHaveLength(246);

    expect(progress.map((p) => p.done)).toEqual([...progress.map((p) => p.done)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ done: 250, total: 250, failed: 3 });
    expect(progress.map((p) => p.chunkIndex).sort()).toEqual([0, 1, 2]);
    for (const p of progress) {
      expect(p.results).toEqual(results.slice(p.chunkIndex * 100, p.chunkIndex * 100 + 100));
      expect(p.total).toBe(250);
    }
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const rec = recordingFetch();
    const results = await client({ fetch: rec.fetch }).contacts.batchUpsert(rowsOf(700), { concurrency: 2 });
    expect(results.every((r) => r.ok)).toBe(true);
    expect(rec.exchanges).toHaveLength(7);
    expect(rec.stats.maxInFlight).toBe(2);
  });

  it('takes no request for no rows', async () => {
    const rec = recordingFetch();
    expect(await client({ fetch: rec.fetch }).contacts.batchUpsert([])).toEqual([]);
    expect(rec.exchanges).toHaveLength(0);
  });

  it('uses idempotencyKeyOf for each chunk, so that a repeated run is replayed, not applied again', async () => {
    const run = randomUUID();
    const rows = rowsOf(150);
    const keyOf = (i: number) => `import-${run}-${i}`;
    const rec = recordingFetch();
    const lw = client({ fetch: rec.fetch });
    const first = await lw.contacts.batchUpsert(rows, { idempotencyKeyOf: keyOf });
    const again = await lw.contacts.batchUpsert(rows, { idempotencyKeyOf: keyOf });
    // A replay answers what the first run answered: `created: true`, where a second application would say false.
    expect(again).toEqual(first);
    expect(first.every((r) => r.ok && r.created)).toBe(true);
    expect(rec.exchanges.map((x) => [x.idempotencyKey, x.replayed]).sort()).toEqual(
      [
        [keyOf(0), null],
        [keyOf(1), null],
        [keyOf(0), 'true'],
        [keyOf(1), 'true'],
      ].sort(),
    );
  });

  it('turns a chunk that fails as a whole into failed rows and goes on with the others', async () => {
    // The second chunk reuses the first chunk's key with other rows: the server refuses it with 409.
    const results = await client().contacts.batchUpsert(rowsOf(250), {
      concurrency: 1,
      idempotencyKeyOf: (i) => (i === 1 ? `k-${i - 1}-${org.orgId}` : `k-${i}-${org.orgId}`),
    });
    expect(results.slice(0, 100).every((r) => r.ok)).toBe(true);
    expect(results.slice(200).every((r) => r.ok)).toBe(true);
    for (const r of results.slice(100, 200))
      expect(r).toMatchObject({ ok: false, error: { code: 'idempotency_key_reused', message: expect.any(String) } });
    expect(results.map((r) => r.index)).toEqual(results.map((_, i) => i));
  });

  it('turns a chunk still failing after its retries (a 502 each time) into failed rows', async () => {
    // Requests 0, 1 and 2 are the first chunk's three attempts; the rest pass.
    const flaky = await startFlakyServer(`${t.origin}/api`, (n) => (n < 3 ? 'bad-gateway' : 'pass'));
    try {
      const progress: BatchProgress[] = [];
      const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep: noWait });
      const results = await lw.contacts.batchUpsert(rowsOf(150), { concurrency: 1, onProgress: (p) => progress.push(p) });
      expect(results.slice(0, 100).every((r) => !r.ok && r.error.code === 'unexpected_response')).toBe(true);
      expect(results.slice(100).every((r) => r.ok)).toBe(true);
      expect(progress.map((p) => [p.done, p.failed])).toEqual([
        [100, 100],
        [150, 100],
      ]);
    } finally {
      await flaky.close();
    }
  });

  it('rejects with the LeadwireError on 401 or 403, starting no further chunk', async () => {
    const readOnly = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'read', type: 'public', permissions: ['contacts:read'] });
    for (const [apiKey, status, code] of [
      ['ck_live_nope', 401, 'unauthorized'],
      [readOnly, 403, 'insufficient_scope'],
    ] as const) {
      const rec = recordingFetch();
      const err = await client({ apiKey, fetch: rec.fetch })
        .contacts.batchUpsert(rowsOf(500), { concurrency: 1 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LeadwireError);
      expect(err).toMatchObject({ status, code });
      expect(rec.exchanges).toHaveLength(1);
    }
  });

  it('stops when the signal aborts: no new chunk starts and the call rejects with the reason', async () => {
    const ctrl = new AbortController();
    const rec = recordingFetch();
    const err = await client({ fetch: rec.fetch })
      .contacts.batchUpsert(rowsOf(300), { concurrency: 1, signal: ctrl.signal, onProgress: () => ctrl.abort(new Error('interrupted')) })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('interrupted');
    expect(rec.exchanges).toHaveLength(1);
  });
});
