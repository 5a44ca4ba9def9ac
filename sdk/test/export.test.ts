/**
 * `leadwire export contacts` against a real server: CSV and JSONL that parse back to the API's records, written page
 * by page (never more than one request ahead of the output), progress, a file that appears only when complete, and
 * the exit codes of refusals and failures.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { CONTACT_COLUMNS } from '../src/cli/export/format.ts';
import { type ContactRecord, createClient } from '../src/index.ts';
import { startFlakyServer } from './client-support.ts';
import { cli, exists, MAIN, REPO_ROOT, tempDir } from './support/cli.ts';

let t: TestApp;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let base: string[];
let records: ContactRecord[];
beforeAll(async () => {
  t = await initTestApp();
  tmp = await tempDir('leadwire-export-');
  org = await t.newOrg();
  base = ['--api-key', org.publicKey, '--base-url', `${t.origin}/api`];
  const lw = createClient({ baseUrl: `${t.origin}/api`, apiKey: org.publicKey });
  // Values CSV must quote (comma, quote, line break), leading + and =, non-ASCII, and empty fields.
  await lw.contacts.upsert({
    email: 'ada@example.com',
    firstName: 'Ada, Countess',
    lastName: 'Lovelace "Byron"',
    tags: ['vip', 'speaker'],
  });
  await lw.contacts.upsert({ email: 'grace@example.com', firstName: 'Grace\nMurray', phone: '+1 555 0100', title: '=cmd()' });
  await lw.contacts.upsert({ email: 'zoe@example.com', firstName: 'Zoë', lastName: 'Ωmega' });
  await lw.companies.upsert({ domain: 'export.example', name: 'Export' });
  await lw.contacts.upsert({ firstName: 'No', lastName: 'Email', companyDomain: 'export.example' });
  await lw.contacts.upsert({ email: 'last@example.com' });
  records = [];
  for await (const c of lw.contacts.list()) records.push(c);
});
afterAll(async () => {
  await t?.close();
  await tmp?.cleanup();
});

const run = (argv: string[], over: Parameters<typeof cli>[1] = { configDir: tmp.dir }) =>
  cli(['export', 'contacts', ...argv, ...base], over);

/** What a CSV cell holds for a record's value. */
const cell = (v: string | number | string[] | null) => (v === null ? '' : Array.isArray(v) ? v.join(';') : String(v));

describe('leadwire export contacts', () => {
  it('writes CSV with the fixed header and proper quoting, which parses back to the records', async () => {
    expect(records).toHaveLength(5);
    const r = await run(['--format', 'csv', '--page-size', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(CONTACT_COLUMNS.join(','));
    const rows = parse<Record<string, string>>(r.stdout, { columns: true });
    expect(rows).toEqual(records.map((c) => Object.fromEntries(CONTACT_COLUMNS.map((k) => [k, cell(c[k])]))));
    expect(r.stdout).toContain('"Ada, Countess","Lovelace ""Byron"""');
    expect(r.stdout).toContain('"Grace\nMurray"');
    expect(r.stdout).toContain(',vip;speaker,');
    // Not a terminal and no --progress: only the closing line.
    expect(r.stderr).toBe('Exported 5 contacts.\n');
  });

  it('writes JSONL, one record per line exactly as the API returns it; --updated-since filters', async () => {
    const r = await run(['--format', 'jsonl']);
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(records);
    const since = await run(['--format', 'jsonl', '--updated-since', records[3]!.updatedAt]);
    expect(
      since.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as ContactRecord).id),
    ).toEqual(records.slice(3).map((c) => c.id));
  });

  it('streams: one request at a time, each page written before the next is asked for', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const out: string[] = [];
    const linesAtRequest: number[] = [];
    const fetchFn: typeof fetch = async (input, init) => {
      linesAtRequest.push(out.join('').split('\n').length - 1);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    };
    const r = await run(['--format', 'jsonl', '--page-size', '1'], {
      configDir: tmp.dir,
      fetch: fetchFn,
      stdout: { write: (s: string) => out.push(s) },
    });
    expect(r.code).toBe(0);
    expect(maxInFlight).toBe(1);
    // Request k (from 0) starts with exactly the k records of the pages before it written out: none held back.
    expect(linesAtRequest).toEqual([0, 1, 2, 3, 4]);
  });

  it('--output writes the file (0600) only once complete and prints a summary; progress shows count and rate', async () => {
    const file = join(tmp.dir, 'contacts.csv');
    let ms = 0;
    const r = await run(['--format', 'csv', '--output', 'contacts.csv', '--page-size', '2', '--progress'], {
      configDir: tmp.dir,
      // Each reading of the clock is half a second later: 5 contacts take 2.5 s.
      now: () => (ms += 500),
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ exported: 5, format: 'csv', output: file });
    expect(parse(await readFile(file, 'utf8'), { columns: true })).toHaveLength(5);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(r.stderr).toMatch(/^export: 5 contacts, \d+ contacts\/s\nExported 5 contacts to .*contacts\.csv\.\n$/);

    // On a terminal: one line redrawn in place.
    const tty = await run(['--format', 'csv', '--output', 'tty.csv', '--page-size', '2'], {
      configDir: tmp.dir,
      isTTY: true,
      now: () => (ms += 500),
    });
    expect(tty.stderr).toContain('\r\u001b[2Kexport: 2 contacts, ');
    expect(tty.stderr).toContain('\r\u001b[2Kexport: 5 contacts, ');
  });

  it('a failure after the retries leaves no file (exit 4); a retried 502 in the middle changes nothing', async () => {
    const sleep = async () => undefined;
    const failing = await startFlakyServer(`${t.origin}/api`, (n) => (n === 0 ? 'pass' : 'bad-gateway'));
    try {
      const r = await cli(
        [
          'export',
          'contacts',
          '--format',
          'csv',
          '--output',
          'broken.csv',
          '--page-size',
          '2',
          '--api-key',
          org.publicKey,
          '--base-url',
          failing.baseUrl,
        ],
        {
          configDir: tmp.dir,
          sleep,
        },
      );
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/502/);
      expect(await exists(join(tmp.dir, 'broken.csv'))).toBe(false);
      expect((await readdir(tmp.dir)).filter((f) => f.includes('partial'))).toEqual([]);
    } finally {
      await failing.close();
    }
    const once = await startFlakyServer(`${t.origin}/api`, (n) => (n === 1 ? 'bad-gateway' : 'pass'));
    try {
      const r = await cli(
        ['export', 'contacts', '--format', 'jsonl', '--page-size', '2', '--api-key', org.publicKey, '--base-url', once.baseUrl],
        {
          configDir: tmp.dir,
          sleep,
        },
      );
      expect(r.code).toBe(0);
      expect(
        r.stdout
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown),
      ).toEqual(records);
    } finally {
      await once.close();
    }
  });

  it('Ctrl-C stops between pages: exit 130, no file', async () => {
    const ctrl = new AbortController();
    let requests = 0;
    const fetchFn: typeof fetch = (input, init) => {
      if (++requests === 2) ctrl.abort();
      return fetch(input, init);
    };
    const r = await run(['--format', 'csv', '--output', 'stopped.csv', '--page-size', '1'], {
      configDir: tmp.dir,
      fetch: fetchFn,
      signal: ctrl.signal,
    });
    expect(r.code).toBe(130);
    expect(await exists(join(tmp.dir, 'stopped.csv'))).toBe(false);
    expect((await readdir(tmp.dir)).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('as a real process piped into a reader that stops early (| head): stops quietly, exit 0', async () => {
    const child = spawn(process.execPath, [MAIN, 'export', 'contacts', '--format', 'jsonl', '--page-size', '1', ...base], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: tmp.dir, LEADWIRE_CONFIG_DIR: tmp.dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // The first record read, the reader goes away, as `head -1` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toMatch(/^Stopped: the output was closed after [1-4] contacts\.\n$/);
    expect(code).toBe(0);
  });

  it('refusals and bad usage: exit 3 for keys, 2 for arguments, naming the problem', async () => {
    const noKey = await cli(['export', 'contacts', '--format', 'csv', '--base-url', `${t.origin}/api`], { configDir: tmp.dir });
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toMatch(/needs a Public API key/);
    const bad = await cli(['export', 'contacts', '--format', 'csv', '--api-key', 'ck_live_unknown', '--base-url', `${t.origin}/api`], {
      configDir: tmp.dir,
    });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/401/);
    const writer = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'w', type: 'public', permissions: ['contacts:write'] });
    const denied = await cli(['export', 'contacts', '--format', 'csv', '--api-key', writer, '--base-url', `${t.origin}/api`], {
      configDir: tmp.dir,
    });
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/lacks the permission contacts:read/);
    const internal = await cli(['export', 'contacts', '--format', 'csv', '--api-key', org.internalKey, '--base-url', `${t.origin}/api`], {
      configDir: tmp.dir,
    });
    expect(internal.code).toBe(3);
    expect(internal.stderr).toMatch(/needs a Public API key/);

    for (const [argv, message] of [
      [['--format', 'xml'], /--format must be csv or jsonl/],
      [[], /--format must be csv or jsonl/],
      [['--format', 'csv', '--updated-since', 'yesterday'], /--updated-since must be an ISO 8601 instant/],
      [['--format', 'csv', '--updated-since', '2026-02-30T00:00:00Z'], /the server refused|ISO 8601/],
      [['--format', 'csv', '--page-size', '500'], /--page-size/],
      [['--format', 'csv', '--output', join(tmp.dir, 'missing', 'x.csv')], /cannot write/],
    ] as const) {
      const r = await run([...argv], { configDir: tmp.dir });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const companies = await cli(['export', 'companies', '--format', 'csv', ...base], { configDir: tmp.dir });
    expect(companies.code).toBe(2);
    expect(companies.stderr).toMatch(/only contacts/);
  });
});
