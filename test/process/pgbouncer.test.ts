/**
 * docs/operating.md, "PgBouncer": Leadwire behind PgBouncer in session mode, the mode every role needs (LISTEN, session
 * advisory locks, prepared statements by name). PgBouncer refuses start-up parameters it does not know, so the request
 * pool's server-side limits must be set after connecting, and still be in force.
 */
import { openOrm, openRequestDb } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { type Bouncer, startPgBouncer } from '../support/pgbouncer.ts';
import { api, killLeftovers, startServer } from '../support/process.ts';
import { type Receiver, startReceiver, TEST_CA_PATH } from '../support/receiver.ts';

let t: TestApp;
let bouncer: Bouncer;
let rx: Receiver;

beforeAll(async () => {
  t = await initTestApp();
  bouncer = await startPgBouncer(t.runtime.deps.config.DATABASE_URL!, 'session');
  rx = await startReceiver();
}, 180_000);
afterAll(async () => {
  await killLeftovers();
  await rx?.close();
  await bouncer?.stop();
  await t?.close();
});

describe('through PgBouncer in session mode', { timeout: 180_000 }, () => {
  it('the request pool connects and the server enforces its limits (PgBouncer refuses them as start-up parameters)', async () => {
    const orm = await openOrm(bouncer.url, { pool: { min: 0, max: 2 } });
    const db = await openRequestDb(orm, {
      max: 2,
      acquireTimeoutMs: 5_000,
      statementTimeoutMs: 300,
      lockTimeoutMs: 250,
      queryTimeoutMs: 5_000,
      transactionTimeoutMs: 4_000,
    });
    try {
      const { rows } = await db.raw(
        `select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l,
           current_setting('idle_in_transaction_session_timeout') as i`,
      );
      expect(rows).toEqual([{ s: '300ms', l: '250ms', i: '4s' }]);
      // Cut by the server (57014), long before the client-side give-up at 5 s.
      await expect(db.raw('select pg_sleep(2)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await db.pool.end();
      await orm.close(true);
    }
    expect(await bouncer.log()).not.toMatch(/unsupported startup parameter/);
  });

  it('an API and a worker process: a write, its webhook delivered by the worker', async () => {
    const env = {
      DATABASE_URL: bouncer.url,
      WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
      NODE_EXTRA_CA_CERTS: TEST_CA_PATH,
    };
    const [apiProcess, worker] = await Promise.all([startServer({ ...env, ROLE: 'api' }), startServer({ ...env, ROLE: 'worker' })]);
    // Two processes booting on a shared 2-core machine: more than the usual 30 s allowed.
    await Promise.all([apiProcess.waitReady(60_000), worker.waitForOutput(/"msg":"leadwire ready"/, 60_000)]);
    const org = await t.newOrg();
    const res = await fetch(`${apiProcess.origin}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.internalKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${rx.origin}/bounced`, events: ['contact.created'] }),
    });
    expect(res.status).toBe(201);
    const upsert = await api(apiProcess.origin, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'bounced@example.com' } });
    expect(upsert).toMatchObject({ status: 200, body: { created: true } });
    const [received] = await rx.waitFor(1, 60_000);
    expect(JSON.parse(received!.rawBody.toString())).toMatchObject({ event: 'contact.created', data: { contact: { id: upsert.body.id } } });
    expect(await Promise.all([apiProcess.stop(), worker.stop()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
