import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { listenHubOf } from '../../packages/core/src/webhooks/listen/hub.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../test/support/app.ts';
import { type Receiver, startReceiver } from '../../test/support/receiver.ts';
import { insertEndpoint, startDeliveringApp, upsertContact } from '../../test/webhooks/delivery/support.ts';
import { listenCommand } from '../src/cli/commands/listen.ts';
import { CliError, UsageError } from '../src/cli/exit-codes.ts';
import { verifyWebhook } from '../src/webhooks.ts';
import { MAIN, REPO_ROOT, tempDir } from './support/cli.ts';
import { localReceiver, type RunningCommand, startCommand } from './support/listen.ts';

let t: TestApp;
let rx: Receiver;
let org: { orgId: string; userId: string; publicKey: string; internalKey: string };
const running: RunningCommand[] = [];
let base: string;

beforeAll(async () => {
  t = await startDeliveringApp();
  rx = await startReceiver();
  org = await t.newOrg({ plan: 'max' });
  base = `${t.origin}/api`;
});
afterAll(async () => {
  for (const r of running) await r.stop().catch(() => undefined);
  await rx?.close();
  await t?.close();
});

async function listen(argv: string[], env: Record<string, string> = {}) {
  const r = await startCommand(listenCommand, ['--base-url', base, ...argv], { LEADWIRE_API_KEY: org.internalKey, ...env });
  running.push(r);
  return r;
}

const RECEIVER_EXAMPLE = `${REPO_ROOT}/docs/examples/receiver.mjs`;

const PRINT_ENV_AND_EXIT =
  "console.log('receiver env: ' + JSON.stringify({ key: process.env.LEADWIRE_API_KEY ?? null, secret: process.env.LEADWIRE_WEBHOOK_SECRET })); process.exit(3)";

const secretOf = async (r: RunningCommand) => (await r.stderrMatch(/Ready\. Your webhook signing secret is (whsec_\S+)/))[1]!;

/** A port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('leadwire listen', () => {
  it('forwards an upsert byte for byte with the headers the server signed, verifiable with the printed secret', async () => {
    const local = await localReceiver();
    const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/real`, { events: ['contact.created'] });
    const cli = await listen(['--forward-to', local.url]);
    const secret = await secretOf(cli);
    const before = rx.requests.length;
    const email = await upsertContact(t, org.publicKey);
    const [got] = await local.waitFor(1);
    const real = (await rx.waitFor(before + 1)).slice(before).find((q) => q.url === '/real')!;
    // The same bytes a real endpoint received, and the headers of a delivery, signed with the listen secret.
    expect(got!.rawBody.equals(real.rawBody)).toBe(true);
    const [row] = await t.sql<{ id: string }>(
      `select id from outbox_events where organization_id = ? and payload->'data'->'contact'->>'email' = ?`,
      [org.orgId, email],
    );
    expect(got!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Leadwire-Webhooks/1.0',
      'x-webhook-event': 'contact.created',
      'webhook-id': row!.id,
      'x-webhook-timestamp': got!.headers['webhook-timestamp'],
    });
    expect(
      Object.keys(real.headers)
        .filter((h) => h.startsWith('x-webhook') || h.startsWith('webhook-'))
        .sort(),
    ).toEqual(
      Object.keys(got!.headers)
        .filter((h) => h.startsWith('x-webhook') || h.startsWith('webhook-'))
        .sort(),
    );
    const event = await verifyWebhook({ rawBody: got!.rawBody, headers: got!.headers, secret });
    expect(event).toMatchObject({ event: 'contact.created', data: { contact: { email } } });
    await expect(verifyWebhook({ rawBody: got!.rawBody, headers: got!.headers, secret: endpoint.secret })).rejects.toThrow();
    const [line] = await cli.stdoutLines(1);
    expect(line).toEqual({
      at: expect.any(String),
      id: row!.id,
      event: 'contact.created',
      recordId: event.event === 'contact.created' ? event.data.contact.id : '',
      status: 200,
      durationMs: expect.any(Number),
      error: null,
    });
    expect(cli.stderr()).toMatch(new RegExp(`contact\\.created\\s+${String(line!.recordId)}\\s+-> 200 \\(\\d+ ms\\)`));
    // Ctrl-C: exit 0, and the server's session ends.
    expect(await cli.stop()).toBe(0);
    await expect.poll(() => listenHubOf(t.runtime.deps).sessionCount, { timeout: 10_000 }).toBe(0);
    await local.close();
  });

  it('prints the same secret on a second listen, and forwards over https too', async () => {
    const first = await listen(['--forward-to', `${rx.origin}/first`]);
    const secret = await secretOf(first);
    expect(await first.stop()).toBe(0);
    const second = await listen(['--forward-to', `${rx.origin}/second`]);
    expect(await secretOf(second)).toBe(secret);
    const before = rx.requests.length;
    await upsertContact(t, org.publicKey);
    // The first test's endpoint (`/real`) gets the same event: wait for the forwarded one, whichever comes first.
    await expect.poll(() => rx.requests.slice(before).some((q) => q.url === '/second'), { timeout: 15_000 }).toBe(true);
    const got = rx.requests.slice(before).find((q) => q.url === '/second')!;
    await verifyWebhook({ rawBody: got.rawBody, headers: got.headers, secret });
    expect(await second.stop()).toBe(0);
  });

  it('forwards only the --events asked for', async () => {
    const local = await localReceiver();
    const cli = await listen(['--forward-to', local.url, '--events', 'contact.updated']);
    await secretOf(cli);
    const email = await upsertContact(t, org.publicKey); // contact.created: not forwarded
    const res = await fetch(`${t.v1}/contacts/upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.publicKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, jobTitle: 'CTO' }),
    });
    expect(res.status).toBe(200);
    await local.waitFor(1);
    expect((await cli.stdoutLines(1)).map((l) => l.event)).toEqual(['contact.updated']);
    expect(local.requests.map((q) => q.headers['x-webhook-event'])).toEqual(['contact.updated']);
    expect(await cli.stop()).toBe(0);
    await local.close();
  });

  it('reports a receiver that is down or failing and keeps listening', async () => {
    const port = await closedPort();
    const cli = await listen(['--forward-to', `http://127.0.0.1:${port}/hook`]);
    await secretOf(cli);
    await upsertContact(t, org.publicKey);
    const [down] = await cli.stdoutLines(1);
    expect(down).toMatchObject({ event: 'contact.created', status: null, error: expect.stringContaining('ECONNREFUSED') });
    expect(cli.stderr()).toMatch(/-> failed: .*ECONNREFUSED/);
    await upsertContact(t, org.publicKey);
    expect((await cli.stdoutLines(2))[1]).toMatchObject({ event: 'contact.created', status: null });
    expect(await cli.stop()).toBe(0);
  });

  it('reconnects after a dropped connection and replays what it missed', async () => {
    const local = await localReceiver(500);
    const cli = await listen(['--forward-to', local.url]);
    await secretOf(cli);
    await upsertContact(t, org.publicKey);
    expect((await cli.stdoutLines(1))[0]).toMatchObject({ status: 500 });
    const hub = listenHubOf(t.runtime.deps);
    t.app.server.closeAllConnections();
    await expect.poll(() => hub.sessionCount, { timeout: 10_000 }).toBe(0);
    const missed = await upsertContact(t, org.publicKey);
    await cli.stderrMatch(/Reconnected\./);
    const lines = await cli.stdoutLines(2);
    expect(JSON.parse(local.requests[1]!.rawBody.toString('utf8')).data.contact.email).toBe(missed);
    expect(lines).toHaveLength(2);
    expect(cli.stderr()).not.toMatch(/could not be replayed/);
    expect(await cli.stop()).toBe(0);
    await local.close();
  });

  it('starts the receiver given after -- with the secret in its environment, forwards once it accepts, and stops it', async () => {
    const port = await closedPort();
    const cli = await listen(
      ['--forward-to', `http://127.0.0.1:${port}/hook`, '--events', 'contact.created', '--', process.execPath, RECEIVER_EXAMPLE],
      { PORT: String(port) },
    );
    await cli.stderrMatch(/Started `.*receiver\.mjs` with LEADWIRE_WEBHOOK_SECRET set/);
    const email = await upsertContact(t, org.publicKey);
    const [line] = await cli.stdoutLines(1);
    // The example receiver answers 400 to a delivery it cannot verify: 200 means it held the secret listen printed.
    expect(line).toMatchObject({ event: 'contact.created', status: 200 });
    await cli.stderrMatch(new RegExp(`contact\\.created ${email.replace(/[.+]/g, '\\$&')} verified`));
    expect(await cli.stop()).toBe(0);
    // Stopped with listen: nothing accepts at its port any more.
    await expect(fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('stops listening (exit 4) when the receiver it started exits, and refuses a -- with no command', async () => {
    const port = await closedPort();
    const cli = await listen(['--forward-to', `http://127.0.0.1:${port}/hook`, '--', process.execPath, '-e', PRINT_ENV_AND_EXIT]);
    await expect(cli.done).rejects.toMatchObject({ exitCode: 4, message: expect.stringMatching(/receiver .* ended \(exit code 3\)/) });
    // The receiver gets the signing secret listen printed, never the API key listen was given.
    const secret = /secret is (whsec_\S+)/.exec(cli.stderr())![1]!;
    expect(cli.stderr()).toContain(`receiver env: ${JSON.stringify({ key: null, secret })}`);
    const missing = await listen(['--forward-to', `http://127.0.0.1:${port}/hook`, '--', '/nonexistent/receiver']);
    await expect(missing.done).rejects.toMatchObject({ exitCode: 4, message: expect.stringMatching(/could not start: .*ENOENT/) });
    await expect((await listen(['--forward-to', `http://127.0.0.1:${port}/hook`, '--'])).done).rejects.toThrow(
      /-- must be followed by the command/,
    );
  });

  it('refuses bad usage (exit 2) and the wrong key (exit 3, naming the Internal key)', async () => {
    await expect((await startCommand(listenCommand, [])).done).rejects.toThrow(UsageError);
    await expect((await startCommand(listenCommand, ['--forward-to', 'ftp://x/'])).done).rejects.toThrow(/http or https/);
    await expect(
      (await startCommand(listenCommand, ['--forward-to', 'http://localhost:4000/', '--events', 'contact.create'])).done,
    ).rejects.toThrow(/unknown event 'contact.create'; did you mean 'contact.created'/);
    const noKey = await startCommand(listenCommand, ['--forward-to', 'http://localhost:4000/', '--base-url', base]);
    await expect(noKey.done).rejects.toMatchObject({ exitCode: 3 });
    const publicKey = await startCommand(listenCommand, ['--forward-to', 'http://localhost:4000/', '--base-url', base], {
      LEADWIRE_API_KEY: org.publicKey,
    });
    const err = await publicKey.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err).toMatchObject({ exitCode: 3, message: expect.stringMatching(/needs an Internal key.*wrong_api_surface/) });
  });
});

describe('leadwire listen as a real process', () => {
  it('forwards a delivery, then on Ctrl-C (SIGINT) closes its stream, which ends the session on the server, and exits 0', async () => {
    const local = await localReceiver();
    const tmp = await tempDir('leadwire-listen-');
    const hub = listenHubOf(t.runtime.deps);
    const child = spawn(process.execPath, [MAIN, 'listen', '--forward-to', local.url, '--base-url', base], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: tmp.dir, LEADWIRE_CONFIG_DIR: tmp.dir, LEADWIRE_API_KEY: org.internalKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      const ready = new Promise<void>((resolve) => {
        const check = () => stderr.includes('Ready.') && resolve();
        child.stderr.on('data', check);
      });
      await Promise.race([ready, exited.then((code) => expect.fail(`exited ${code} before it was ready: ${stderr}`))]);
      const sessions = hub.sessionCount;
      expect(sessions).toBeGreaterThan(0);
      const email = await upsertContact(t, org.publicKey);
      const [got] = await local.waitFor(1);
      expect(JSON.parse(got!.rawBody.toString('utf8')).data.contact.email).toBe(email);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      await expect.poll(() => hub.sessionCount, { timeout: 10_000 }).toBe(sessions - 1);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await local.close();
      await tmp.cleanup();
    }
  });
});
