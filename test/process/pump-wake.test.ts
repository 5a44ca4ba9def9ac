/**
 * Split roles with a pump that does not poll (issue 27; docs/operating.md, "An idle server"): an event written by a
 * ROLE=api process wakes the pump of a ROLE=worker process through a NOTIFY after its commit. The worker's backstop
 * poll is 10 minutes here, so a delivery within the wait proves the wake crossed processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { api, killLeftovers, startServer } from '../support/process.ts';
import { type Receiver, startReceiver, TEST_CA_PATH } from '../support/receiver.ts';

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  t = await initTestApp();
  rx = await startReceiver();
}, 180_000);
afterAll(async () => {
  await killLeftovers();
  await rx?.close();
  await t?.close();
});

describe('ROLE=api writes, ROLE=worker delivers, without polling', { timeout: 180_000 }, () => {
  it('the api process wakes the worker pump: each of two writes is delivered long before the backstop', async () => {
    const env = {
      DATABASE_URL: t.runtime.deps.config.DATABASE_URL!,
      WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
      NODE_EXTRA_CA_CERTS: TEST_CA_PATH,
      WEBHOOK_PUMP_INTERVAL_MS: '600000',
    };
    const [apiProcess, worker] = await Promise.all([startServer({ ...env, ROLE: 'api' }), startServer({ ...env, ROLE: 'worker' })]);
    await Promise.all([apiProcess.waitReady(60_000), worker.waitForOutput(/"msg":"leadwire ready"/, 60_000)]);
    const org = await t.newOrg();
    const res = await fetch(`${apiProcess.origin}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.internalKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${rx.origin}/split`, events: ['contact.created'] }),
    });
    expect(res.status).toBe(201);
    // Two writes one after the other: the second comes after the worker's pump went back to sleep.
    for (const [i, email] of ['split-1@example.com', 'split-2@example.com'].entries()) {
      const upsert = await api(apiProcess.origin, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email } });
      expect(upsert).toMatchObject({ status: 200, body: { created: true } });
      const received = await rx.waitFor(i + 1, 60_000);
      expect(JSON.parse(received[i]!.rawBody.toString())).toMatchObject({ event: 'contact.created', data: { contact: { email } } });
    }
    expect(await Promise.all([apiProcess.stop(), worker.stop()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
