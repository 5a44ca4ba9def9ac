/**
 * Tokens in request paths stay out of the server's logs (issue 16, section 4): a tracked link's token
 * (`/api/t/l/<token>`) as a workflow intake's already did. Read from the log lines a real server writes for real
 * requests, so what is checked is what an operator's log store would get.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { waiter } from '../support/waiter.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';

let t: TestApp;
let a: TestOrg;
const output: string[] = [];
const written = waiter();
beforeAll(async () => {
  const logStream = { write: (line: string) => void (output.push(line), written.wake()) };
  t = await initTestApp({ LOG_LEVEL: 'info', BASE_URL: 'https://api.leadwire.test/api' }, { logStream });
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

/** Sends the request and answers its status with the server's one `request` line about it. */
async function logged(path: string, init: RequestInit = {}) {
  const res = await fetch(`${t.origin}${path}`, { redirect: 'manual', ...init });
  await res.arrayBuffer();
  const id = res.headers.get('x-request-id')!;
  const line = () => output.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.reqId === id && l.msg === 'request');
  // The line is written once the answer has gone out, so it may follow the answer by a moment.
  await written.until(
    () => line() !== undefined,
    () => `no request line for ${path}:\n${output.join('')}`,
    5_000,
  );
  return { status: res.status, line: line()! };
}

describe('request logs', () => {
  it('show a tracked link as /api/t/l/[redacted], followed or not, and never its token anywhere', async () => {
    const contact = await a.owner.contacts.create.mutate({ email: 'tess@example.org' });
    const token = randomBytes(16).toString('base64url');
    await t.sql(`insert into tracked_links (id, organization_id, contact_id, token, url) values (?, ?, ?, ?, ?)`, [
      randomUUID(),
      a.orgId,
      contact.id,
      token,
      'https://www.example.com/quote',
    ]);
    const unknown = randomBytes(16).toString('base64url');

    for (const [path, init, status] of [
      [`/api/t/l/${token}`, {}, 302],
      [`/api/t/l/${token}?utm_source=sms`, { method: 'HEAD' }, 302],
      [`/api/t/l/${unknown}`, {}, 404],
    ] as const) {
      const { status: got, line } = await logged(path, init);
      expect(got, path).toBe(status);
      expect(line).toMatchObject({ path: '/api/t/l/[redacted]', status });
    }

    // The intake's token, redacted before, still is.
    const wf = await a.owner.workflows.create.mutate({ name: 'Logs', steps: [{ action: 'create_task', input: { title: 'Hi' } }] });
    const intakeToken = wf.intakeUrl.split('/').at(-1)!;
    const intake = await logged(`/api/workflows/hooks/${intakeToken}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com' }),
    });
    expect(intake).toMatchObject({ status: 202, line: { path: '/api/workflows/hooks/[redacted]' } });

    const all = output.join('');
    for (const secret of [token, unknown, intakeToken]) expect(all).not.toContain(secret);
  });
});
