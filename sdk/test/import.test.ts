import { spawn } from 'node:child_process';
import { access, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { cli, MAIN, REPO_ROOT, spawnCli, tempDir } from './support/cli.ts';

let t: TestApp;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let n = 0;
beforeAll(async () => {
  tmp = await tempDir('leadwire-import-');
  t = await initTestApp();
});
afterAll(async () => {
  await t?.close();
  await tmp?.cleanup();
});

const exists = (path: string) => access(path).then(() => true, () => false);

/** A new organization, its key, and a file written with `content` in the temp folder. */
async function setup(name: string, content: string | Buffer) {
  const org = await t.newOrg();
  const path = join(tmp.dir, `${++n}-${name}`);
  await writeFile(path, content);
  const base = ['--api-key', org.publicKey, '--base-url', `${t.origin}/api`];
  const contacts = () =>
    t.sql<any>('select email, first_name, last_name, job_title, tags, custom, source from contacts where organization_id = ? order by email', [org.orgId]);
  return { ...org, path, base, contacts, configDir: tmp.dir };
}

describe('leadwire import (CSV)', () => {
  it('imports the good rows, writes the bad ones with their values, line and error to the failed file, exits 1', async () => {
    const csv = [
      'Email,First Name,last_name,Job Title,Tags,custom.plan,Favourite Colour',
      'ada@example.com,Ada,Lovelace,CTO,vip; speaker,pro,blue',
      'BAD-EMAIL,Bad,Email,,,,red',
      'nul@example.com,Nul\u0000Byte,X,,,,',
      '"quote@example.com"oops,Quote,Bad,,,,',
      'grace@example.com,Grace,"Hopper, Rear Adm.",,"navy,cobol",,green',
      'extra@example.com,Too,Many,,,,,extra-field',
      ',,,,,,',
      '',
      'ann@example.com,"Ann',
      'Marie",Smith,,,,',
    ].join('\r\n');
    const s = await setup('contacts.csv', csv);
    const r = await cli(['import', s.path, ...s.base, '--source', 'trade-show'], { configDir: s.configDir });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ created: 3, updated: 0, failed: 4, skipped: 0, failedFile: `${s.path}.failed.csv` });
    expect(r.stderr.match(/matches no contact field/g)).toHaveLength(1);
    expect(r.stderr).toContain('column "Favourite Colour" matches no contact field');
    expect(r.stderr).toContain('Done: 3 created, 0 updated, 4 failed');

    expect(await s.contacts()).toEqual([
      { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', job_title: 'CTO', tags: ['vip', 'speaker'], custom: { plan: 'pro' }, source: 'trade-show' },
      { email: 'ann@example.com', first_name: 'Ann\r\nMarie', last_name: 'Smith', job_title: null, tags: [], custom: {}, source: 'trade-show' },
      { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper, Rear Adm.', job_title: null, tags: ['navy', 'cobol'], custom: {}, source: 'trade-show' },
    ]);

    const failed = parse<Record<string, string>>(await readFile(`${s.path}.failed.csv`, 'utf8'), { columns: true });
    expect(failed.map((f) => [f.import_line, f.import_error_code])).toEqual([
      ['3', 'validation_failed'],
      ['4', 'validation_failed'],
      ['5', 'csv_malformed_quotes'],
      ['7', 'csv_field_count'],
    ]);
    expect(failed[0]).toMatchObject({ Email: 'BAD-EMAIL', 'First Name': 'Bad', last_name: 'Email', 'Favourite Colour': 'red', import_raw: '' });
    expect(failed[0]!.import_error_message).toMatch(/email/);
    expect(failed[1]).toMatchObject({ Email: 'nul@example.com', 'First Name': 'Nul\u0000Byte' });
    expect(failed[1]!.import_error_message).toMatch(/firstName/);
    expect(failed[2]).toMatchObject({ Email: '', import_raw: '"quote@example.com"oops,Quote,Bad,,,,' });
    expect(failed[3]).toMatchObject({ import_raw: 'extra@example.com,Too,Many,,,,,extra-field' });
    expect(await exists(`${s.path}.leadwire-import.json`)).toBe(false);

    // The failed file, corrected, imports as it is: its own columns are ignored without a warning, and the records that
    // could not be split (only import_raw filled) are blank rows until someone moves their text into the columns.
    const fixed = (await readFile(`${s.path}.failed.csv`, 'utf8')).replace('BAD-EMAIL', 'fixed@example.com');
    const again = await setup('fixed.csv', fixed);
    const r2 = await cli(['import', again.path, ...again.base], { configDir: again.configDir });
    expect(r2.stderr).not.toContain('import_line');
    expect(JSON.parse(r2.stdout)).toMatchObject({ created: 1, failed: 1 });
  });

  it('--map sends columns to fields, custom keys or nowhere; a --map naming no column is a usage error', async () => {
    const s = await setup('de.csv', 'E-mail,Vorname,Firma,Notizen\nlin@example.com,Lin,Acme,ignore me\n');
    const r = await cli(['import', s.path, ...s.base, '--map', 'E-mail=email,Vorname=firstName,Firma=custom.firma,Notizen=-'], { configDir: s.configDir });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('warning');
    expect(JSON.parse(r.stdout)).toEqual({ created: 1, updated: 0, failed: 0, skipped: 0, failedFile: null });
    expect(await s.contacts()).toMatchObject([{ email: 'lin@example.com', first_name: 'Lin', custom: { firma: 'Acme' } }]);
    expect(await exists(`${s.path}.failed.csv`)).toBe(false);

    const bad = await cli(['import', s.path, ...s.base, '--map', 'Mail=email'], { configDir: s.configDir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--map names the column "Mail", which the file does not have');
    expect(await exists(`${s.path}.leadwire-import.json`)).toBe(false);

    const nothing = await setup('none.csv', 'foo,bar\n1,2\n');
    const none = await cli(['import', nothing.path, ...nothing.base], { configDir: s.configDir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no column maps to a contact field');
  });

  it('a second import of the same file updates instead of duplicating', async () => {
    const s = await setup('twice.csv', 'email,first_name\none@example.com,One\ntwo@example.com,Two\n');
    expect(JSON.parse((await cli(['import', s.path, ...s.base], { configDir: s.configDir })).stdout)).toMatchObject({ created: 2 });
    await writeFile(s.path, 'email,first_name\none@example.com,Uno\ntwo@example.com,Two\n');
    const r = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 0, updated: 2 });
    expect((await s.contacts()).map((c: any) => c.first_name)).toEqual(['Uno', 'Two']);
  });

  it('refuses an Internal key (exit 3, naming the key type needed) and a file that is not UTF-8 (exit 2)', async () => {
    const s = await setup('k.csv', 'email\nk@example.com\n');
    const r = await cli(['import', s.path, '--api-key', s.internalKey, '--base-url', `${t.origin}/api`], { configDir: s.configDir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('needs a Public API key, and the key given is an Internal key');
    expect(await s.contacts()).toEqual([]);

    const latin1 = await setup('latin1.csv', Buffer.from('email,first_name\nj@example.com,J\xe9r\xf4me\n', 'latin1'));
    const r2 = await cli(['import', latin1.path, ...latin1.base], { configDir: s.configDir });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('is not UTF-8');
    expect(await latin1.contacts()).toEqual([]);
  });

  it('--dry-run reads and maps the whole file, lists the problems and sends nothing', async () => {
    const s = await setup('dry.csv', 'email,name_first\na@example.com,A\n"b@example.com"x,B\nc@example.com,C,extra\n');
    const noNetwork = (() => {
      throw new Error('the dry run must not call the server');
    }) as unknown as typeof fetch;
    const r = await cli(['import', s.path, '--dry-run'], { configDir: s.configDir, fetch: noNetwork });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ dryRun: true, rows: 1, failed: 2 });
    expect(r.stderr).toContain('line 3: csv_malformed_quotes');
    expect(r.stderr).toContain('line 4: csv_field_count');
    expect(r.stderr).toContain('"name_first" matches no contact field');
    expect(await exists(`${s.path}.failed.csv`)).toBe(false);
    expect(await exists(`${s.path}.leadwire-import.json`)).toBe(false);
  });
});

describe('leadwire import (JSONL)', () => {
  it('imports objects, splits a tags string, merges custom, and reports bad lines to a JSONL failed file', async () => {
    const lines = [
      JSON.stringify({ email: 'j1@example.com', 'First Name': 'J', tags: 'a;b', custom: { tier: 2 }, 'custom.region': 'eu' }),
      '{bad json',
      '',
      '[1,2]',
      JSON.stringify({ email: 'not-an-email', firstName: 'Nope' }),
      JSON.stringify({ email: 'j2@example.com', jobTitle: 'Eng', shoeSize: 44 }),
    ];
    const s = await setup('people.jsonl', `${lines.join('\n')}\n`);
    const r = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 2, failed: 3, failedFile: `${s.path}.failed.jsonl` });
    expect(r.stderr).toContain('"shoeSize" matches no contact field');
    expect(await s.contacts()).toMatchObject([
      { email: 'j1@example.com', first_name: 'J', tags: ['a', 'b'], custom: { tier: 2, region: 'eu' } },
      { email: 'j2@example.com', job_title: 'Eng', custom: {} },
    ]);
    const failed = (await readFile(`${s.path}.failed.jsonl`, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(failed).toMatchObject([
      { line: 2, error: { code: 'json_invalid' }, raw: '{bad json' },
      { line: 4, error: { code: 'json_not_object' }, raw: '[1,2]' },
      { line: 5, error: { code: 'validation_failed' }, row: { email: 'not-an-email', firstName: 'Nope' } },
    ]);
  });
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

describe('as a real process', () => {
  it('node sdk/src/cli/main.ts import: exit 1 with failures, the summary as JSON on stdout and progress on stderr', async () => {
    const s = await setup('proc.csv', 'email,first_name\np1@example.com,P\nnope,N\n');
    const r = await spawnCli(['import', s.path, '--base-url', `${t.origin}/api`], { configDir: join(tmp.dir, 'proc-config'), env: { LEADWIRE_API_KEY: s.publicKey } });
    expect(r.stderr).toMatch(/^import: 2\/2 rows, .* 1 failed$/m);
    expect(r.stderr).toContain('Done: 1 created, 0 updated, 1 failed');
    expect(r.stderr).not.toContain(s.publicKey);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ created: 1, updated: 0, failed: 1, skipped: 0, failedFile: `${s.path}.failed.csv` });
    const ok = await setup('proc-ok.csv', 'email\np2@example.com\n');
    const r2 = await spawnCli(['import', ok.path, '--base-url', `${t.origin}/api`], { configDir: join(tmp.dir, 'proc-config'), env: { LEADWIRE_API_KEY: ok.publicKey } });
    expect(r2.code).toBe(0);
    const r3 = await spawnCli(['import', ok.path, '--base-url', `${t.origin}/api`], { configDir: join(tmp.dir, 'proc-config'), env: { LEADWIRE_API_KEY: 'ck_live_unknownKey000000000000000000' } });
    expect(r3.code).toBe(3);
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
    const bodyOf = async (req: IncomingMessage) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    const proxy = createServer((req, res) => {
      void (async () => {
        const body = await bodyOf(req);
        firstHeld();
        await released;
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
        const upstream = await fetch(`${t.origin}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body.length ? { body } : {}) });
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      })();
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/api`;
    try {
      const child = spawn(process.execPath, [MAIN, 'import', s.path, '--base-url', base], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: tmp.dir, LEADWIRE_CONFIG_DIR: tmp.dir, LEADWIRE_API_KEY: s.publicKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      await held;
      child.kill('SIGINT');
      // The process prints its notice when the signal is handled: only then let the held chunks through.
      while (!stderr.includes('Interrupted: finishing what is in flight')) await new Promise((r) => child.stderr.once('data', r));
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
      release();
      await new Promise((r) => proxy.close(r));
    }
  });
});
