import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { cli, exists, importSetup, MAIN, REPO_ROOT, tempDir } from './support/cli.ts';

// Resuming after Ctrl-C (in-process and in a real process) and after a crash.
let t: TestApp;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let setup: ReturnType<typeof importSetup>;
beforeAll(async () => {
  tmp = await tempDir('leadwire-import-');
  t = await initTestApp();
  setup = importSetup(t, tmp.dir);
});
afterAll(async () => {
  await t?.close();
  await tmp?.cleanup();
});

describe('resuming an interrupted import', () => {
  const ROWS = 1000;
  const file = () => {
    const rows = Array.from({ length: ROWS }, (_, i) => (i === 50 || i === 900 ? `bad-${i},Bad` : `r${i}@resume.com,R${i}`));
    return `email,first name\n${rows.join('\n')}\n`;
  };
  /** A fetch that lets the first batch answer through, then interrupts the import as Ctrl-C would. */
  const interruptAfterFirstChunk = () => {
    const controller = new AbortController();
    const f: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      controller.abort();
      return res;
    };
    return { signal: controller.signal, fetch: f };
  };

  it('Ctrl-C finishes the chunks in flight and exits 130; the next run skips what was done: every row once, checkpoint gone', async () => {
    const s = await setup('big.csv', file());
    const cp = `${s.path}.leadwire-import.json`;
    const first = await cli(['import', s.path, ...s.base], { configDir: s.configDir, ...interruptAfterFirstChunk() });
    expect(first.code).toBe(130);
    expect(first.stderr).toContain('Run the same command again to resume');
    const partial = JSON.parse(first.stdout);
    const state = JSON.parse(await readFile(cp, 'utf8'));
    expect(state.doneChunks).toBeGreaterThanOrEqual(1);
    expect(state.doneChunks).toBeLessThan(ROWS / 100);
    expect((await s.contacts()).length).toBe(partial.created);
    expect(partial.created).toBe(state.doneChunks * 100 - 1); // row 50 (chunk 0) failed

    const second = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Resuming: ${state.doneChunks * 100} rows done by an earlier run are skipped.`);
    const rest = JSON.parse(second.stdout);
    expect(rest).toMatchObject({ skipped: state.doneChunks * 100, updated: 0 });
    expect(partial.created + rest.created).toBe(ROWS - 2);
    const emails = (await s.contacts()).map((c: any) => c.email);
    expect(emails).toHaveLength(ROWS - 2);
    expect(new Set(emails).size).toBe(ROWS - 2);
    const failed = parse<Record<string, string>>(await readFile(`${s.path}.failed.csv`, 'utf8'), { columns: true });
    expect(failed.map((f) => f.import_line)).toEqual(['52', '902']);
    expect(await exists(cp)).toBe(false);
  });

  it('chunks sent again after a crash reuse their Idempotency-Keys: the server replays its answers', async () => {
    const s = await setup('crash.csv', file());
    const cp = `${s.path}.leadwire-import.json`;
    expect((await cli(['import', s.path, ...s.base], { configDir: s.configDir, ...interruptAfterFirstChunk() })).code).toBe(130);
    // A crash before the checkpoint was first saved after a chunk: the server has rows the checkpoint does not count.
    const state = JSON.parse(await readFile(cp, 'utf8'));
    await writeFile(cp, JSON.stringify({ ...state, doneChunks: 0, failedBytes: 0, failed: 0 }));
    const r = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    // Replayed answers say "created", as they did the first time; without the same keys these rows would be "updated".
    expect(JSON.parse(r.stdout)).toMatchObject({ created: ROWS - 2, updated: 0, failed: 2, skipped: 0 });
    expect((await s.contacts()).length).toBe(ROWS - 2);
    const failed = parse<Record<string, string>>(await readFile(`${s.path}.failed.csv`, 'utf8'), { columns: true });
    expect(failed.map((f) => f.import_line)).toEqual(['52', '902']);
  });

  it('a changed file or other options start over, with a warning', async () => {
    const s = await setup('changed.csv', file());
    expect((await cli(['import', s.path, ...s.base], { configDir: s.configDir, ...interruptAfterFirstChunk() })).code).toBe(130);
    const other = await cli(['import', s.path, ...s.base, '--source', 'other'], { configDir: s.configDir, ...interruptAfterFirstChunk() });
    expect(other.stderr).toContain('not resuming the earlier import: the options (--map, --source) differ');
    await writeFile(s.path, `${file()}extra@resume.com,Extra\n`);
    const r = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(r.stderr).toContain('not resuming the earlier import: the file changed');
    expect(JSON.parse(r.stdout)).toMatchObject({ skipped: 0, failed: 2 });
    expect((await s.contacts()).length).toBe(ROWS - 1);
  });
});

/**
 * A proxy in front of the test server: `intercept` runs for each request and may answer it itself (a status and
 * JSON body) or return undefined to let it through (after whatever it awaited).
 */
async function proxyTo(
  origin: string,
  intercept: (req: IncomingMessage, body: Buffer) => Promise<{ status: number; body: unknown } | undefined>,
) {
  const proxy = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const answer = await intercept(req, body);
      if (answer) {
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>;
      const upstream = await fetch(`${origin}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body.length ? { body } : {}) });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })();
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return { proxy, base: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/api` };
}

describe('a server that keeps failing', () => {
  it('a chunk refused with 503 after the retries stops the import with exit 4, its rows not marked failed; a re-run finishes', async () => {
    const s = await setup('flaky.csv', `email\n${Array.from({ length: 500 }, (_, i) => `f${i}@flaky.com`).join('\n')}\n`);
    let failing = true;
    const { proxy, base } = await proxyTo(t.origin, async (req, body) => {
      const second = body.includes('"f100@flaky.com"');
      return failing && second ? { status: 503, body: { error: 'Down for maintenance', code: 'service_unavailable' } } : undefined;
    });
    try {
      const r = await cli(['import', s.path, '--api-key', s.publicKey, '--base-url', base], { configDir: s.configDir });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('did not take the rows from line 102 on, after retries (service_unavailable');
      expect(r.stderr).toContain('Progress is saved: run the same command again to resume.');
      expect(await exists(`${s.path}.failed.csv`)).toBe(false);
      const state = JSON.parse(await readFile(`${s.path}.leadwire-import.json`, 'utf8'));
      expect(state).toMatchObject({ doneChunks: 1, failed: 0 });

      failing = false;
      const again = await cli(['import', s.path, '--api-key', s.publicKey, '--base-url', base], { configDir: s.configDir });
      expect(again.code).toBe(0);
      // Chunks 2 to 4 may have been saved by the first run; sent again with their keys, they are replayed as created.
      expect(JSON.parse(again.stdout)).toMatchObject({ created: 400, updated: 0, failed: 0, skipped: 100 });
      expect((await s.contacts()).length).toBe(500);
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });
});

describe('Ctrl-C in a real process', () => {
  it('SIGINT lets the chunks in flight finish, saves the checkpoint and exits 130; a re-run completes the import', async () => {
    const s = await setup('sigint.csv', `email\n${Array.from({ length: 1000 }, (_, i) => `s${i}@sigint.com`).join('\n')}\n`);
    // A proxy in front of the server holds the batch requests until the test has sent SIGINT, so the signal always
    // arrives while chunks are in flight, however fast the machine.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let firstHeld!: () => void;
    const held = new Promise<void>((r) => (firstHeld = r));
    const { proxy, base } = await proxyTo(t.origin, async () => {
      firstHeld();
      await released;
      return undefined;
    });
    let child: ReturnType<typeof spawn> | undefined;
    try {
      child = spawn(process.execPath, [MAIN, 'import', s.path, '--base-url', base], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: tmp.dir, LEADWIRE_CONFIG_DIR: tmp.dir, LEADWIRE_API_KEY: s.publicKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const proc = child as ReturnType<typeof spawn> & { stdout: NodeJS.ReadableStream; stderr: NodeJS.ReadableStream };
      proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => proc.on('close', r));
      // A process that dies before its first request fails the test here, with its output, instead of timing out.
      await Promise.race([held, exited.then((code) => expect.fail(`exited ${code} before sending: ${stderr}`))]);
      proc.kill('SIGINT');
      // The process prints its notice when the signal is handled: only then let the held chunks through.
      while (!stderr.includes('Interrupted: finishing what is in flight')) await new Promise((r) => proc.stderr.once('data', r));
      release();
      expect(await exited).toBe(130);
      const partial = JSON.parse(stdout);
      expect(partial).toMatchObject({ interrupted: true, failed: 0 });
      expect(partial.created).toBeGreaterThanOrEqual(100);
      expect(partial.created).toBeLessThan(1000);
      const state = JSON.parse(await readFile(`${s.path}.leadwire-import.json`, 'utf8'));
      expect(state.doneChunks * 100).toBe(partial.created);

      const rest = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
      expect(rest.code).toBe(0);
      expect(JSON.parse(rest.stdout)).toMatchObject({ created: 1000 - partial.created, skipped: partial.created });
      expect((await s.contacts()).length).toBe(1000);
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      release();
      await new Promise((r) => proxy.close(r));
    }
  });
});
