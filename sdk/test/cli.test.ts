import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { configDirOf, readConfig, resolveCredentials, writeConfig } from '../src/cli/config.ts';
import { cliErrorOf, ExitCode } from '../src/cli/exit-codes.ts';
import { maskKey, progressBar } from '../src/cli/output.ts';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { cli, spawnCli, tempDir } from './support/cli.ts';

let t: TestApp;
let keys: { publicKey: string; internalKey: string };
let tmp: Awaited<ReturnType<typeof tempDir>>;
let n = 0;
const freshDir = () => join(tmp.dir, `c${++n}`);
beforeAll(async () => {
  tmp = await tempDir();
  t = await initTestApp();
  keys = await t.newOrg();
});
afterAll(async () => {
  await t?.close();
  await tmp?.cleanup();
});

describe('help, version and usage errors', () => {
  it('--help lists every command and the exit codes on stdout', async () => {
    const r = await cli(['--help'], { configDir: freshDir() });
    expect(r.code).toBe(0);
    for (const name of ['login', 'logout', 'import', 'help']) expect(r.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    expect(r.stdout).toMatch(/^ {2}130 +interrupted/m);
    expect(r.stdout).toMatch(/^ {2}3 +authentication/m);
    expect(r.stderr).toBe('');
  });

  it.each([['import'], ['login'], ['logout']])(
    '%s --help, -h after arguments and the help command print the command usage',
    async (name) => {
      const a = await cli([name, '--help'], { configDir: freshDir() });
      const b = await cli(['help', name], { configDir: freshDir() });
      const c = await cli([name, 'x', '-h'], { configDir: freshDir() });
      expect(a.code).toBe(0);
      expect(a.stdout).toContain(`Usage: leadwire ${name}`);
      expect(b).toEqual(a);
      expect(c).toEqual(a);
    },
  );

  it('--version prints the package version', async () => {
    expect(await cli(['--version'], { configDir: freshDir() })).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('no command, an unknown command or option: exit 2 with a hint on stderr', async () => {
    const none = await cli([], { configDir: freshDir() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: leadwire <command>');
    const typo = await cli(['imprt', 'x.csv'], { configDir: freshDir() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'imprt'; did you mean 'import'?");
    expect(typo.stdout).toBe('');
    const far = await cli(['frobnicate'], { configDir: freshDir() });
    expect(far.stderr).not.toContain('did you mean');
    expect((await cli(['--bogus'], { configDir: freshDir() })).code).toBe(2);
    expect((await cli(['help', 'nope'], { configDir: freshDir() })).code).toBe(2);
  });

  it('a bad flag or argument of a command: exit 2, the problem and that command usage on stderr', async () => {
    const dir = freshDir();
    const cases: [string[], RegExp][] = [
      [['import', '--bogus', 'x.csv'], /Unknown option '--bogus'/],
      [['import'], /missing argument: file/],
      [['import', 'a.csv', 'b.csv'], /unexpected argument: b\.csv/],
      [['import', 'contacts.txt'], /must end in \.csv or \.jsonl/],
      [['import', 'missing.csv'], /cannot read missing\.csv/],
      [['import', '.', '--dry-run'], /must end in \.csv/],
      [['import', 'folder.csv'], /cannot read folder\.csv/],
      [['import', 'missing.csv', '--source', 'no spaces!'], /--source takes/],
      [['import', 'missing.csv', '--map', 'Header'], /--map takes "Header=field"/],
      [['import', 'missing.csv', '--map', 'Header=nickname'], /unknown field "nickname"/],
      [['import', 'missing.csv', '--failed'], /argument missing/],
      [['login', '--base-url', 'ftp://example.com'], /must use http or https/],
      [['login', '--base-url', 'not a url'], /must be an http\(s\) URL/],
      [['logout', '--kind', 'both'], /--kind must be public or internal/],
    ];
    await mkdir(join(dir, 'folder.csv'), { recursive: true });
    for (const [argv, message] of cases) {
      const r = await cli(argv, { configDir: dir, cwd: dir });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).toMatch(message);
      expect(r.stderr, argv.join(' ')).toContain(`Usage: leadwire ${argv[0]!}`);
    }
  });
});

describe('credentials', () => {
  it('config dir: LEADWIRE_CONFIG_DIR, then XDG_CONFIG_HOME/leadwire, then ~/.config/leadwire', () => {
    expect(configDirOf({ LEADWIRE_CONFIG_DIR: '/a', XDG_CONFIG_HOME: '/x' }, '/home/u')).toBe('/a');
    expect(configDirOf({ XDG_CONFIG_HOME: '/x' }, '/home/u')).toBe('/x/leadwire');
    expect(configDirOf({}, '/home/u')).toBe('/home/u/.config/leadwire');
  });

  it('key: --api-key, then LEADWIRE_API_KEY, then the saved key of that kind; base URL: flag, env, saved, default', async () => {
    const configDir = freshDir();
    await writeConfig(configDir, {
      version: 1,
      keys: {
        public: { apiKey: 'ck_saved_public', baseUrl: 'https://saved.example/api' },
        internal: { apiKey: 'ck_saved_internal', baseUrl: 'https://int.example/api/' },
      },
    });
    const env = { LEADWIRE_API_KEY: 'ck_env', LEADWIRE_BASE_URL: 'https://env.example/api' };
    expect(await resolveCredentials({ configDir, env }, { apiKey: 'ck_flag', baseUrl: 'https://flag.example/api/' }, 'public')).toEqual({
      apiKey: 'ck_flag',
      baseUrl: 'https://flag.example/api',
      source: 'flag',
    });
    expect(await resolveCredentials({ configDir, env }, {}, 'public')).toEqual({
      apiKey: 'ck_env',
      baseUrl: 'https://env.example/api',
      source: 'env',
    });
    expect(await resolveCredentials({ configDir, env: {} }, {}, 'public')).toEqual({
      apiKey: 'ck_saved_public',
      baseUrl: 'https://saved.example/api',
      source: 'config',
    });
    expect(await resolveCredentials({ configDir, env: {} }, {}, 'internal')).toEqual({
      apiKey: 'ck_saved_internal',
      baseUrl: 'https://int.example/api',
      source: 'config',
    });
    expect(await resolveCredentials({ configDir: freshDir(), env: {} }, { apiKey: 'k' }, 'public')).toMatchObject({
      baseUrl: 'http://localhost:3000/api',
    });
    // An empty variable is no key: it must not shadow the saved one.
    expect(await resolveCredentials({ configDir, env: { LEADWIRE_API_KEY: '' } }, {}, 'public')).toMatchObject({
      apiKey: 'ck_saved_public',
    });
  });

  it('no key of the kind needed: exit 3 naming the three ways to give one', async () => {
    const configDir = freshDir();
    await writeConfig(configDir, { version: 1, keys: { internal: { apiKey: 'ck_saved_internal', baseUrl: 'http://x/api' } } });
    await expect(resolveCredentials({ configDir, env: {} }, {}, 'public')).rejects.toMatchObject({
      exitCode: 3,
      message: expect.stringMatching(/Public API key.*--api-key.*LEADWIRE_API_KEY.*leadwire login/),
    });
    const csv = join(configDir, 'c.csv');
    await writeFile(csv, 'email\na@example.com\n');
    const r = await cli(['import', csv], { configDir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no API key');
  });

  it('the config file is written 0600 in a 0700 folder, replaced whole, and a broken one is a clear error', async () => {
    const configDir = join(freshDir(), 'nested');
    await writeConfig(configDir, { version: 1, keys: { public: { apiKey: 'ck_a', baseUrl: 'http://a/api' } } });
    await writeConfig(configDir, { version: 1, keys: { public: { apiKey: 'ck_b', baseUrl: 'http://b/api' } } });
    expect((await stat(join(configDir, 'config.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    expect(await readdir(configDir)).toEqual(['config.json']);
    expect((await readConfig(configDir)).keys.public?.apiKey).toBe('ck_b');
    await writeFile(join(configDir, 'config.json'), '{not json');
    await expect(readConfig(configDir)).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('is not valid JSON') });
  });

  it('maskKey shows the prefix and the last four characters only', () => {
    const key = 'ck_live_0123456789abcdefghijklmnopqrstuv';
    expect(maskKey(key)).toBe('ck_live_…stuv');
    expect(maskKey('ck_live_short')).toBe('ck_live_…');
    expect(maskKey('rawsecretwithoutprefix0123')).toBe('…0123');
    expect(maskKey(key)).not.toContain('0123456789');
  });
});

describe('leadwire login / logout against a real server', () => {
  const base = () => `${t.origin}/api`;

  it('saves a Public key as public and an Internal key as internal, printing neither in full', async () => {
    const configDir = freshDir();
    const pub = await cli(['login', '--api-key', keys.publicKey, '--base-url', base()], { configDir });
    expect(pub.code).toBe(0);
    expect(JSON.parse(pub.stdout)).toEqual({ kind: 'public', baseUrl: base(), key: maskKey(keys.publicKey) });
    const int = await cli(['login', '--api-key', keys.internalKey, '--base-url', `${base()}/`], { configDir });
    expect(int.code).toBe(0);
    expect(JSON.parse(int.stdout).kind).toBe('internal');
    for (const out of [pub.stdout, pub.stderr, int.stdout, int.stderr]) {
      expect(out).not.toContain(keys.publicKey);
      expect(out).not.toContain(keys.internalKey);
    }
    expect(int.stderr).toContain('Internal key');
    expect(await readConfig(configDir)).toEqual({
      version: 1,
      keys: { public: { apiKey: keys.publicKey, baseUrl: base() }, internal: { apiKey: keys.internalKey, baseUrl: base() } },
    });
    expect((await stat(join(configDir, 'config.json'))).mode & 0o777).toBe(0o600);

    const one = await cli(['logout', '--kind', 'internal'], { configDir });
    expect(one.code).toBe(0);
    expect(Object.keys((await readConfig(configDir)).keys)).toEqual(['public']);
    const all = await cli(['logout'], { configDir });
    expect(all.stderr).toContain('Removed the saved keys');
    expect(await readdir(configDir)).toEqual([]);
    expect((await cli(['logout'], { configDir })).stderr).toContain('No saved keys');
  });

  it('a Public key without contacts:read is still recognised as public', async () => {
    const { orgId, userId } = await t.newOrg();
    const writeOnly = await t.newKey({ orgId, userId, type: 'public', name: 'w', permissions: ['contacts:write'] });
    const r = await cli(['login', '--api-key', writeOnly, '--base-url', base()], { configDir: freshDir() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).kind).toBe('public');
  });

  it('a refused key exits 3 and saves nothing; an unreachable server exits 4', async () => {
    const configDir = freshDir();
    const bad = await cli(['login', '--api-key', 'ck_live_thisKeyDoesNotExist0000000000', '--base-url', base()], { configDir });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('refused the key ck_live_…0000 (401)');
    // Both ways to new keys, for keys that were printed once and piped in (issue 28).
    expect(bad.stderr).toContain(`API keys screen (${t.origin}/app/keys)`);
    expect(bad.stderr).toContain('admin -- create-key --email <your email>');
    await expect(stat(join(configDir, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });

    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const down = await cli(['login', '--api-key', keys.publicKey, '--base-url', `http://127.0.0.1:${port}/api`], { configDir });
    expect(down.code).toBe(4);
    expect(down.stderr).toContain('could not reach');
    expect(down.stderr).toContain('pass --base-url or set LEADWIRE_BASE_URL');
    expect(down.stderr).toContain(`API keys screen (http://127.0.0.1:${port}/app/keys)`);
    expect(down.stderr).toContain('admin -- create-key --email <your email>');
  });

  it('reads the key from piped standard input, and from a terminal without echoing it', async () => {
    const piped = await cli(['login', '--base-url', base()], { configDir: freshDir(), stdin: Readable.from([`${keys.publicKey}\n`]) });
    expect(piped.code).toBe(0);

    // A terminal: raw mode on while typing (no echo), off afterwards; backspace edits; nothing typed is written back.
    const tty = Object.assign(new PassThrough(), {
      isTTY: true,
      modes: [] as boolean[],
      setRawMode(raw: boolean) {
        tty.modes.push(raw);
        return tty;
      },
    });
    const configDir = freshDir();
    const pending = cli(['login', '--base-url', base()], { configDir, stdin: tty });
    tty.write(`${keys.publicKey}x\u007f\r`);
    const r = await pending;
    expect(r.code).toBe(0);
    expect(tty.modes).toEqual([true, false]);
    expect(r.stderr).toContain('API key (input hidden): \n');
    expect(r.stderr).not.toContain(keys.publicKey);
    expect((await readConfig(configDir)).keys.public?.apiKey).toBe(keys.publicKey);

    const junk = await cli(['login', '--base-url', base()], { configDir: freshDir(), stdin: Readable.from(['not a key\n']) });
    expect(junk.code).toBe(2);
  });
  it('logs in with both keys of the JSON `admin bootstrap` prints, piped in; a bad key in it saves neither', async () => {
    const configDir = freshDir();
    const bootstrap = JSON.stringify({ orgId: 'x', userId: 'y', publicKey: keys.publicKey, internalKey: keys.internalKey });
    const r = await cli(['login', '--base-url', base()], { configDir, stdin: Readable.from([`${bootstrap}\n`]) });
    expect(r.code, r.stderr).toBe(0);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).kind),
    ).toEqual(['public', 'internal']);
    expect(r.stdout + r.stderr).not.toContain(keys.internalKey);
    expect((await readConfig(configDir)).keys).toEqual({
      public: { apiKey: keys.publicKey, baseUrl: base() },
      internal: { apiKey: keys.internalKey, baseUrl: base() },
    });

    const other = freshDir();
    const revoked = JSON.stringify({ publicKey: keys.publicKey, internalKey: 'ck_live_thisKeyDoesNotExist0000000000' });
    const bad = await cli(['login', '--base-url', base()], { configDir: other, stdin: Readable.from([revoked]) });
    expect(bad.code).toBe(3);
    expect((await readConfig(other)).keys).toEqual({});
    for (const junk of ['{"orgId":"x"}', '{not json']) {
      const refused = await cli(['login', '--base-url', base()], { configDir: freshDir(), stdin: Readable.from([junk]) });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/publicKey nor internalKey|is not JSON/);
    }
  });
});

describe('error mapping and progress', () => {
  it('maps API failures to exit codes with messages naming the right key type', () => {
    expect(cliErrorOf({ status: 401, code: 'unauthorized', message: 'x' }, 'public').exitCode).toBe(ExitCode.auth);
    const surface = cliErrorOf({ status: 403, code: 'wrong_api_surface', message: 'x' }, 'public');
    expect(surface.exitCode).toBe(3);
    expect(surface.message).toContain('needs a Public API key, and the key given is an Internal key');
    expect(cliErrorOf({ status: 403, code: 'wrong_api_surface' }, 'internal').message).toContain('needs an Internal key');
    expect(cliErrorOf({ status: 403, code: 'insufficient_scope', required: 'contacts:write' }, 'public').message).toContain(
      'contacts:write',
    );
    expect(cliErrorOf({ status: 0, code: 'network_error', message: 'ECONNREFUSED' }, 'public').exitCode).toBe(ExitCode.server);
    expect(cliErrorOf({ status: 503, code: 'unavailable', message: 'down' }, 'public').exitCode).toBe(ExitCode.server);
    expect(cliErrorOf(new Error('boom'), 'public').exitCode).toBe(ExitCode.server);
  });

  it('progress: plain lines at each tenth off a terminal, one redrawn line on a terminal', () => {
    let clock = 0;
    const plain: string[] = [];
    const p = progressBar(
      { stderr: { write: (s: string) => plain.push(s) }, isTTY: false },
      { label: 'import', total: 1000, now: () => clock },
    );
    for (let done = 0; done <= 1000; done += 50) {
      clock += 1000;
      p.update({ done, failed: 1 });
    }
    p.finish({ done: 1000, failed: 1 });
    expect(plain).toHaveLength(10);
    expect(plain[0]).toBe('import: 100/1,000 rows, 33 rows/s, 1 failed\n');
    expect(plain.at(-1)).toBe('import: 1,000/1,000 rows, 48 rows/s, 1 failed\n');
    // A total that was overestimated (multi-line CSV fields): the final state is printed at the end.
    const short: string[] = [];
    const e = progressBar(
      { stderr: { write: (x: string) => short.push(x) }, isTTY: false },
      { label: 'import', total: 1000, now: () => clock },
    );
    e.update({ done: 950, failed: 0 });
    e.finish({ done: 980, failed: 0 });
    expect(short.map((x) => x.split(',')[0])).toEqual(['import: 950/1', 'import: 980/980 rows']);

    const tty: string[] = [];
    clock = 0;
    const q = progressBar(
      { stderr: { write: (s: string) => tty.push(s) }, isTTY: true },
      { label: 'import', total: 200, now: () => clock },
    );
    q.update({ done: 100, failed: 0 });
    q.update({ done: 150, failed: 0 }); // within 100 ms of the last draw: skipped
    clock += 500;
    q.update({ done: 200, failed: 2 });
    q.finish({ done: 200, failed: 2 });
    expect(tty).toHaveLength(3);
    expect(tty[0]!.startsWith(`\r\u001b[2Kimport [${'#'.repeat(12)}${'.'.repeat(12)}]  50% 100/200 rows`)).toBe(true);
    expect(tty.at(-1)).toMatch(/100% 200\/200 rows .* 2 failed\n$/);
  });
});

describe('as a real process', () => {
  it('exit codes and streams: --version 0 on stdout, unknown command 2 on stderr, login from a pipe 0', async () => {
    const configDir = freshDir();
    expect(await spawnCli(['--version'], { configDir })).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const unknown = await spawnCli(['lisen'], { configDir });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain("unknown command 'lisen'");
    const login = await spawnCli(['login', '--base-url', `${t.origin}/api`], { configDir, input: `${keys.publicKey}\n` });
    expect(login.stderr).not.toContain(keys.publicKey);
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ kind: 'public' });
    expect((await stat(join(configDir, 'config.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')).keys.public.apiKey).toBe(keys.publicKey);
    const noKey = await spawnCli(['import', 'x.csv'], { configDir: freshDir(), cwd: configDir });
    expect(noKey.code).toBe(2);
  });
});
