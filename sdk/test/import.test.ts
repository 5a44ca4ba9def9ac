import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { cli, exists, importSetup, spawnCli, tempDir } from './support/cli.ts';

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
      {
        email: 'ada@example.com',
        first_name: 'Ada',
        last_name: 'Lovelace',
        job_title: 'CTO',
        tags: ['vip', 'speaker'],
        custom: { plan: 'pro' },
        source: 'trade-show',
      },
      {
        email: 'ann@example.com',
        first_name: 'Ann\r\nMarie',
        last_name: 'Smith',
        job_title: null,
        tags: [],
        custom: {},
        source: 'trade-show',
      },
      {
        email: 'grace@example.com',
        first_name: 'Grace',
        last_name: 'Hopper, Rear Adm.',
        job_title: null,
        tags: ['navy', 'cobol'],
        custom: {},
        source: 'trade-show',
      },
    ]);

    const failed = parse<Record<string, string>>(await readFile(`${s.path}.failed.csv`, 'utf8'), { columns: true });
    expect(failed.map((f) => [f.import_line, f.import_error_code])).toEqual([
      ['3', 'validation_failed'],
      ['4', 'validation_failed'],
      ['5', 'csv_malformed_quotes'],
      ['7', 'csv_field_count'],
    ]);
    expect(failed[0]).toMatchObject({
      Email: 'BAD-EMAIL',
      'First Name': 'Bad',
      last_name: 'Email',
      'Favourite Colour': 'red',
      import_raw: '',
    });
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
    const r = await cli(['import', s.path, ...s.base, '--map', 'E-mail=email,Vorname=firstName,Firma=custom.firma,Notizen=-'], {
      configDir: s.configDir,
    });
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
    // Issue 18: the dry run writes the failed-rows file, as the import would.
    expect(JSON.parse(r.stdout)).toEqual({ dryRun: true, rows: 1, failed: 2, failedFile: `${s.path}.failed.csv` });
    expect(r.stderr).toContain('line 3: csv_malformed_quotes');
    expect(r.stderr).toContain('line 4: csv_field_count');
    expect(r.stderr).toContain('"name_first" matches no contact field');
    expect(await exists(`${s.path}.failed.csv`)).toBe(true);
    expect(await exists(`${s.path}.leadwire-import.json`)).toBe(false);
  });

  it("--dry-run judges rows as the server does (invalid emails, no identity): its counts and failed file are the import's", async () => {
    const rows = [
      'email,first_name,last_name,phone,tags',
      'good1@example.com,Ada,Lovelace,,',
      'not-an-email,Bad,Email,,',
      'two@@example.com,Two,Ats,,',
      ',Only,Names,,',
      ',,,+1 555 0100,',
      ',,,,lonely-tag',
      'good2@example.com,,,,vip;speaker',
      `good3@example.com,${'x'.repeat(201)},,,`,
      'GOOD4@Example.com,Grace,Hopper,,',
    ];
    const s = await setup('judged.csv', `${rows.join('\n')}\n`);
    const noNetwork = (() => {
      throw new Error('the dry run must not call the server');
    }) as unknown as typeof fetch;
    const dry = await cli(['import', s.path, '--dry-run'], { configDir: s.configDir, fetch: noNetwork });
    expect(dry.code).toBe(1);
    expect(JSON.parse(dry.stdout)).toEqual({ dryRun: true, rows: 3, failed: 6, failedFile: `${s.path}.failed.csv` });
    expect(dry.stderr).toContain(`Dry run: 3 rows would be sent, 6 would fail (see ${s.path}.failed.csv); nothing was sent.`);
    expect(dry.stderr).toContain('line 3: validation_failed: Validation failed: email: email must be a valid email address');
    expect(dry.stderr).toContain('line 5: missing_identity: A contact needs an email');
    const dryFailed = await readFile(`${s.path}.failed.csv`, 'utf8');
    const failedLines = parse<Record<string, string>>(dryFailed, { columns: true }).map((r) => [r.import_line, r.import_error_code]);
    expect(failedLines).toEqual([
      ['3', 'validation_failed'],
      ['4', 'validation_failed'],
      ['5', 'missing_identity'],
      ['6', 'missing_identity'],
      ['7', 'missing_identity'],
      ['9', 'validation_failed'],
    ]);
    expect(await s.contacts()).toEqual([]);

    // The import itself: the same counts, and the same failed file to the byte.
    const real = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(JSON.parse(real.stdout)).toMatchObject({ created: 3, failed: 6 });
    expect(await readFile(`${s.path}.failed.csv`, 'utf8')).toBe(dryFailed);
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
    const failed = (await readFile(`${s.path}.failed.jsonl`, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(failed).toMatchObject([
      { line: 2, error: { code: 'json_invalid' }, raw: '{bad json' },
      { line: 4, error: { code: 'json_not_object' }, raw: '[1,2]' },
      { line: 5, error: { code: 'validation_failed' }, row: { email: 'not-an-email', firstName: 'Nope' } },
    ]);
  });
});

describe('hostile files', () => {
  it('a JSONL line over 1 MB is reported, not buffered, and the lines after it are imported', async () => {
    const s = await setup(
      'long.jsonl',
      `{"email":"l1@example.com"}\n{"email":"${'x'.repeat(1_200_000)}@example.com"}\n{"email":"l2@example.com"}`,
    );
    const r = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(r.code).toBe(1);
    expect((await s.contacts()).map((c) => c.email)).toEqual(['l1@example.com', 'l2@example.com']);
    const [failed] = (await readFile(`${s.path}.failed.jsonl`, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(failed).toMatchObject({ line: 2, error: { code: 'json_line_too_long' } });
    expect(failed.raw.length).toBeLessThan(1100);
  });

  it('a CSV quote never closed stops at that record (over 1 MB) instead of swallowing the file into memory', async () => {
    const s = await setup(
      'unclosed.csv',
      `email,first_name\nu1@example.com,U\nu2@example.com,"never closed\n${'u3@example.com,x\n'.repeat(80_000)}`,
    );
    const r = await cli(['import', s.path, ...s.base], { configDir: s.configDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('line 3: a record longer than 1048576 bytes');
    expect((await s.contacts()).map((c) => c.email)).toEqual(['u1@example.com']);
    const failed = parse<Record<string, string>>(await readFile(`${s.path}.failed.csv`, 'utf8'), { columns: true });
    expect(failed).toMatchObject([{ import_line: '3', import_error_code: 'csv_record_too_large' }]);
  });

  it('a failed file that cannot be written is a usage error before anything is sent', async () => {
    const s = await setup('nowhere.csv', 'email\nn1@example.com\n');
    const r = await cli(['import', s.path, ...s.base, '--failed', join(tmp.dir, 'no-such-dir', 'failed.csv')], { configDir: s.configDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot write');
    expect(await s.contacts()).toEqual([]);
  });
});

describe('as a real process', () => {
  it('node sdk/src/cli/main.ts import: exit 1 with failures, the summary as JSON on stdout and progress on stderr', async () => {
    const s = await setup('proc.csv', 'email,first_name\np1@example.com,P\nnope,N\n');
    const r = await spawnCli(['import', s.path, '--base-url', `${t.origin}/api`], {
      configDir: join(tmp.dir, 'proc-config'),
      env: { LEADWIRE_API_KEY: s.publicKey },
    });
    expect(r.stderr).toMatch(/^import: 2\/2 rows, .* 1 failed$/m);
    expect(r.stderr).toContain('Done: 1 created, 0 updated, 1 failed');
    expect(r.stderr).not.toContain(s.publicKey);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ created: 1, updated: 0, failed: 1, skipped: 0, failedFile: `${s.path}.failed.csv` });
    const ok = await setup('proc-ok.csv', 'email\np2@example.com\n');
    const r2 = await spawnCli(['import', ok.path, '--base-url', `${t.origin}/api`], {
      configDir: join(tmp.dir, 'proc-config'),
      env: { LEADWIRE_API_KEY: ok.publicKey },
    });
    expect(r2.code).toBe(0);
    const r3 = await spawnCli(['import', ok.path, '--base-url', `${t.origin}/api`], {
      configDir: join(tmp.dir, 'proc-config'),
      env: { LEADWIRE_API_KEY: 'ck_live_unknownKey000000000000000000' },
    });
    expect(r3.code).toBe(3);
  });
});
