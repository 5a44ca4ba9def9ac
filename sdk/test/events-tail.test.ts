/**
 * `leadwire events tail` against a real server: every event printed once across restarts (stopped at a page's end or
 * in its middle), forwarding to a real local receiver with signatures `verifyWebhook` accepts (again until it answers
 * 2xx), and the exit codes of refusals. Waits go through the context's sleep, which the test releases by hand: no test
 * waits on wall time.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizonPast } from '../../test/events/feed-support.ts';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { waiter } from '../../test/support/waiter.ts';
import type { CliContext } from '../src/cli/context.ts';
import { defaultStatePath } from '../src/cli/events/state.ts';
import { createClient, type FeedEvent, type LeadwireClient } from '../src/index.ts';
import { verifyWebhook } from '../src/webhooks.ts';
import { startFlakyServer } from './client-support.ts';
import { cli, exists, MAIN, REPO_ROOT, tempDir } from './support/cli.ts';
import { localReceiver } from './support/listen.ts';
import { startTail } from './support/tail.ts';

let t: TestApp;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: string;
beforeAll(async () => {
  t = await initTestApp();
  tmp = await tempDir('leadwire-tail-');
  api = `${t.origin}/api`;
});
afterAll(async () => {
  await t?.close();
  await tmp?.cleanup();
});

/** Waits until the feed can read every event of the organization (its horizon is the whole cluster's). */
async function settled(orgId: string): Promise<void> {
  const [last] = await t.sql<{ txid: string }>(
    'select txid::text from outbox_events where organization_id = ? order by txid desc limit 1',
    [orgId],
  );
  if (last) await horizonPast(t, last.txid);
}

/** A new organization, its client, and `add(n)` making n contacts (n contact.created events); returns their emails. */
async function workspace() {
  const org = await t.newOrg();
  const lw = createClient({ baseUrl: api, apiKey: org.publicKey });
  const add = async (n: number) => {
    const emails = Array.from({ length: n }, () => `tail-${randomUUID().slice(0, 12)}@example.com`);
    for (const email of emails) await lw.contacts.upsert({ email });
    await settled(org.orgId);
    return emails;
  };
  return { org, lw, add };
}

const emailOf = (e: FeedEvent) => (e.event === 'contact.created' ? e.data.contact.email : null);

/** `leadwire events tail` against this test's server, with its config folder. */
const tail = (argv: string[], over: Partial<CliContext> = {}) =>
  startTail(['--base-url', api, ...argv], { cwd: tmp.dir, configDir: tmp.dir, ...over });

describe('leadwire events tail', () => {
  it('prints every event once across restarts, stopped at a page’s end or in its middle, and polls when caught up', async () => {
    const { org, add } = await workspace();
    const first = await add(5);
    const state = join(tmp.dir, `state-${randomUUID()}.json`);
    const argv = ['--api-key', org.publicKey, '--state', state, '--page-size', '2'];

    const a = tail([...argv, '--after', 'start']);
    await a.sleeping(1);
    expect(a.lines().map((e) => emailOf(e as FeedEvent))).toEqual(first);
    // Caught up: a poll after a second, then longer while nothing happens.
    const more = await add(3);
    a.release();
    await a.sleeping(2);
    expect(a.lines().map((e) => emailOf(e as FeedEvent))).toEqual([...first, ...more]);
    expect(a.sleeps).toEqual([1000, 1000]);
    a.release();
    await a.sleeping(3);
    a.release();
    await a.sleeping(4);
    expect(a.sleeps).toEqual([1000, 1000, 1000, 2000]);
    expect(await a.stop()).toBe(0);
    expect(a.stderr()).toMatch(/Stopped; the next run resumes/);
    const seen = a.lines().map((e) => e.id);

    // Events while stopped; the restart (no --after) starts where the first run stopped.
    const whileDown = await add(5);
    const b = tail(argv);
    // Stopped in the middle of a page: after the third line (pages of two).
    await b.lineCount(3);
    b.abort();
    expect(await b.done).toBe(0);
    expect(b.lines().map((e) => emailOf(e as FeedEvent))).toEqual(whileDown.slice(0, 3));

    const c = tail(argv);
    await c.linesReleasing(2);
    await c.stop();
    expect(
      c.lines().map((e) => emailOf(e as FeedEvent)),
      c.stderr(),
    ).toEqual(whileDown.slice(3));
    const all = [...seen, ...b.lines().map((e) => e.id), ...c.lines().map((e) => e.id)];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(13);

    const saved = JSON.parse(await readFile(state, 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({ version: 1, baseUrl: api, cursor: expect.any(String) });
    expect(JSON.stringify(saved)).not.toContain(org.publicKey);
  });

  it('starts at now by default, with a state file per server and key in the config folder; --types filters', async () => {
    const { org, lw, add } = await workspace();
    await add(2);
    const a = tail(['--api-key', org.publicKey, '--types', 'contact.updated']);
    await a.sleeping(1);
    expect(a.lines()).toEqual([]);
    expect(a.stderr()).toMatch(/from now/);
    const [email] = await add(1);
    await lw.contacts.upsert({ email: email!, firstName: 'Changed' });
    await settled(org.orgId);
    a.release();
    await a.sleeping(2);
    expect(a.lines().map((e) => e.event)).toEqual(['contact.updated']);
    await a.stop();
    const other = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'o', type: 'public', permissions: ['events:read'] });
    const b = tail(['--api-key', other]);
    await b.sleeping(1);
    await b.stop();
    const paths = [org.publicKey, other].map((key) => defaultStatePath(tmp.dir, api, key));
    expect(paths[0]).not.toBe(paths[1]);
    for (const path of paths) expect(await exists(path)).toBe(true);
    expect(paths[0]).toMatch(/events-tail\/[0-9a-f]{16}\.json$/);
  });

  it('--forward-to posts each event signed like a delivery (verifyWebhook accepts it) and posts again until 2xx', async () => {
    const { org, lw, add } = await workspace();
    const rx = await localReceiver(500);
    const state = join(tmp.dir, `fwd-${randomUUID()}.json`);
    try {
      const [email] = await add(1);
      const a = tail(['--api-key', org.publicKey, '--after', 'start', '--state', state, '--forward-to', rx.url]);
      const secret = /signed with (whsec_\S+) /.exec((await rx.waitFor(1), a.stderr()))![1]!;
      // The receiver failed: the command waits, then posts the same event again.
      await a.sleeping(1);
      expect(a.sleeps).toEqual([500]);
      rx.answer(200);
      a.release();
      await a.sleeping(2);
      expect(rx.requests).toHaveLength(2);
      const listed: FeedEvent[] = [];
      for await (const e of lw.events.list()) listed.push(e);
      for (const req of rx.requests) {
        const verified = await verifyWebhook({ rawBody: req.rawBody, headers: req.headers, secret });
        expect(verified).toEqual(listed[0]);
        expect(req.headers['webhook-id']).toBe(listed[0]!.id);
        expect(emailOf(verified)).toBe(email);
      }
      expect(rx.requests[0]!.headers['x-webhook-id']).not.toBe(rx.requests[1]!.headers['x-webhook-id']);
      expect(a.lines().map((l) => [l.id, l.status, l.attempt])).toEqual([
        [listed[0]!.id, 500, 1],
        [listed[0]!.id, 200, 2],
      ]);
      await a.stop();

      // The secret is kept: a restart signs with the same one, and forwards only what is new.
      await add(1);
      const b = tail(['--api-key', org.publicKey, '--state', state, '--forward-to', rx.url]);
      await b.sleeping(1);
      await b.stop();
      expect(rx.requests).toHaveLength(3);
      await verifyWebhook({ rawBody: rx.requests[2]!.rawBody, headers: rx.requests[2]!.headers, secret });

      // A secret of the user's own is used and never written to the state.
      const mine = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
      await add(1);
      const c = tail(['--api-key', org.publicKey, '--state', state, '--forward-to', rx.url, '--secret', mine]);
      await c.sleeping(1);
      await c.stop();
      await verifyWebhook({ rawBody: rx.requests[3]!.rawBody, headers: rx.requests[3]!.headers, secret: mine });
      expect(await readFile(state, 'utf8')).not.toContain(mine);
    } finally {
      await rx.close();
    }
  });

  it('waits out a server that fails beyond the client’s retries, then goes on', async () => {
    const { org, add } = await workspace();
    const emails = await add(3);
    // Requests 1-3 (the second page and its two retries) meet a 502.
    const flaky = await startFlakyServer(api, (n) => (n >= 1 && n <= 3 ? 'bad-gateway' : 'pass'));
    try {
      const a = tail([
        '--api-key',
        org.publicKey,
        '--after',
        'start',
        '--page-size',
        '2',
        '--base-url',
        flaky.baseUrl,
        '--state',
        join(tmp.dir, `f-${randomUUID()}`),
      ]);
      // Two backoffs of the client, then the command's own wait.
      await a.sleeping(1);
      a.release();
      await a.sleeping(2);
      a.release();
      await a.sleeping(3);
      expect(a.stderr()).toMatch(/reading the feed failed \(unexpected_response/);
      expect(a.sleeps[2]).toBe(1000);
      a.release();
      await a.sleeping(4);
      expect(a.lines().map((e) => emailOf(e as FeedEvent))).toEqual(emails);
      await a.stop();
    } finally {
      await flaky.close();
    }
  });

  it('exit 3 for a key refused (401) or lacking events:read (403); exit 2 for a bad cursor, event name, URL or state file', async () => {
    const { org } = await workspace();
    const exit = async (argv: string[]) => {
      const r = tail(argv);
      const code = await r.done;
      return { code, stderr: r.stderr() };
    };
    expect(await exit(['--api-key', 'ck_live_unknown'])).toMatchObject({ code: 3, stderr: expect.stringMatching(/401/) });
    const leads = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'l', type: 'public', permissions: ['leads:write'] });
    expect(await exit(['--api-key', leads])).toMatchObject({ code: 3, stderr: expect.stringMatching(/lacks the permission events:read/) });
    const reader = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'r', type: 'public', permissions: ['contacts:read'] });
    expect(await exit(['--api-key', reader, '--types', 'deal.won'])).toMatchObject({
      code: 3,
      stderr: expect.stringMatching(/events:read/),
    });
    expect(await exit(['--api-key', org.internalKey])).toMatchObject({ code: 3, stderr: expect.stringMatching(/needs a Public API key/) });
    expect(await exit([])).toMatchObject({ code: 3, stderr: expect.stringMatching(/no API key/) });

    const key = ['--api-key', org.publicKey];
    expect(await exit([...key, '--after', 'bm90LWEtY3Vyc29y', '--state', join(tmp.dir, 'x.json')])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/invalid_cursor/),
    });
    expect(await exit([...key, '--types', 'contact.create'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/did you mean 'contact.created'/),
    });
    expect(await exit([...key, '--forward-to', 'ftp://x/'])).toMatchObject({ code: 2 });
    expect(await exit([...key, '--forward-to', 'http://127.0.0.1:9/', '--secret', 'hunter2'])).toMatchObject({ code: 2 });
    expect(await exit([...key, '--after', '../../etc'])).toMatchObject({ code: 2 });
    const junk = join(tmp.dir, 'junk.json');
    await writeFile(junk, 'not json');
    expect(await exit([...key, '--state', junk])).toMatchObject({ code: 2, stderr: expect.stringMatching(/not a state file/) });
    const follow = await cli(['events', 'follow'], { configDir: tmp.dir });
    expect(follow.code).toBe(2);
    expect(follow.stderr).toMatch(/leadwire events tail/);
  });
});

describe('leadwire events tail as a real process', () => {
  it('stops cleanly on SIGINT (exit 0) with its place saved', async () => {
    const { org, add } = await workspace();
    await add(2);
    const state = join(tmp.dir, `sigint-${randomUUID()}.json`);
    const child = spawn(process.execPath, [MAIN, 'events', 'tail', '--after', 'start', '--state', state, '--base-url', api], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: tmp.dir, LEADWIRE_CONFIG_DIR: tmp.dir, LEADWIRE_API_KEY: org.publicKey },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    const w = waiter();
    child.stdout.setEncoding('utf8').on('data', (d: string) => ((stdout += d), w.wake()));
    child.stderr.setEncoding('utf8').on('data', (d: string) => ((stderr += d), w.wake()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await w.until(
        () => stdout.split('\n').length > 2,
        () => `no events:\n${stderr}`,
        20_000,
      );
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/Stopped/);
      const saved = JSON.parse(await readFile(state, 'utf8')) as { cursor: string };
      const rest: unknown[] = [];
      const lw: LeadwireClient = createClient({ baseUrl: api, apiKey: org.publicKey });
      for await (const e of lw.events.list({ after: saved.cursor })) rest.push(e);
      expect(rest).toEqual([]);
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
  });
});
