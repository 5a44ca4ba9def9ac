/**
 * The operator CLIs: `admin` (exit codes, one JSON line on stdout, usage on stderr) and `migrate`. The admin command's
 * argument, success and refusal cases run in this process through `runAdmin` (support/admin.ts: the whole command,
 * given its arguments, environment and output streams; a spawn costs about half a second each); two runs go through the real process: a
 * bad argument (the exit code and the usage on stderr) and `npm run --silent admin` on a fresh DATA_DIR (the cluster
 * started and stopped for the duration, only the JSON line on stdout). The migrate command likewise runs through
 * `runMigrate`, its applying run through the real process. Most runs use DATABASE_URL of a test database; the embedded
 * DATA_DIR path is covered by lifecycle.test.ts and by the fresh-DATA_DIR run below.
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHere, migrateHere } from '../support/admin.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { admin, cleanEnv, clusterPids, freshDataDir, killLeftovers, MIGRATE, ROOT, run } from '../support/process.ts';

const PASSWORD = 'admin cli test password';

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase('admin_cli');
  env = { DATABASE_URL: db.url };
});
afterAll(async () => {
  await killLeftovers();
  await db?.drop();
});

function oneJsonLine(stdout: string): any {
  expect(stdout).toMatch(/^\{.*\}\n$/);
  return JSON.parse(stdout);
}

let seq = 0;
const email = () => `owner${++seq}-${Date.now()}@cli.example`;

describe('admin CLI', { timeout: 180_000 }, () => {
  it('--help prints the usage on stdout and exits 0', async () => {
    const r = await adminHere(['--help'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('bootstrap --org <name> --email <email> --password <password> [--plan starter|pro|max]');
    expect(r.stdout).toContain('create-key --org <orgId> --user <userId> --type public|internal [--permissions a,b] --name <name>');
    expect(r.stdout).toContain('create-key --email <email> --type public|internal [--permissions a,b] --name <name>');
  });

  it('refuses bad or missing arguments with exit 2, the reason and the usage on stderr, and nothing on stdout', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const boot = ['bootstrap', '--org', 'Acme', '--email', 'a@b.example', '--password', PASSWORD];
    const key = ['create-key', '--org', id, '--user', id, '--type', 'public', '--name', 'k'];
    const cases: [string[], RegExp][] = [
      [[], /Missing command/],
      [['frobnicate'], /Unknown command 'frobnicate'/],
      [['bootstrap'], /bootstrap needs --org, --email, --password/],
      [[...boot.slice(0, 4), 'not-an-email', ...boot.slice(5)], /--email is not an email address/],
      [[...boot.slice(0, 6), 'Sh0rt!'], /--password must have at least 8 characters/],
      [[...boot, '--plan', 'gold'], /--plan must be one of starter, pro, max/],
      [[...boot, '--bogus'], /Unknown option '--bogus'/],
      [[...boot, 'extra'], /Unexpected argument 'extra'/],
      [[...boot, '--type', 'public'], /bootstrap does not take --type/],
      [['bootstrap', '--org'], /argument missing/],
      [key.slice(0, 7), /create-key needs --name/],
      [[...key.slice(0, 6), 'secret', ...key.slice(7)], /--type must be one of public, internal/],
      [['create-key', '--org', 'acme', ...key.slice(3)], /--org must be an id/],
      [['create-key', '--email', 'a@b.example', ...key.slice(1)], /takes --email or --org and --user, not both/],
      [['create-key', '--org', id, ...key.slice(5)], /create-key needs --org and --user, or --email in their place/],
      [['create-key', '--email', 'a.b.example', ...key.slice(5)], /--email is not an email address: 'a.b.example'/],
      [
        [...key, '--permissions', 'contacts:read,contacts:delete'],
        /--permissions: unknown 'contacts:delete'; valid: contacts:read, contacts:write, companies:read, companies:write, leads:write, notes:write, events:read/,
      ],
      [[...key.slice(0, 6), 'internal', ...key.slice(7), '--permissions', 'contacts:read'], /--permissions applies to public keys only/],
    ];
    // An unreachable database: arguments are judged before any connection is attempted.
    const offline = { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' };
    const results = await Promise.all(cases.map(([args]) => adminHere(args, offline)));
    results.forEach((r, i) => {
      const [args, reason] = cases[i]!;
      const what = `admin ${args.join(' ')}`;
      expect(r.code, what).toBe(2);
      expect(r.stdout, what).toBe('');
      expect(r.stderr, what).toMatch(reason);
      expect(r.stderr, what).toContain('Usage:');
      expect(r.stderr, what).toContain('create-key --org <orgId>');
      // A rejected password is not echoed back either.
      expect(r.stderr, what).not.toContain('Sh0rt!');
    });
  });

  it('as a process, exits 2 on a bad argument with the reason and the usage on stderr, and nothing on stdout', async () => {
    const r = await admin(['frobnicate'], { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^admin: Unknown command 'frobnicate'\n\nUsage:\n/);
  });

  it('bootstraps, then creates keys of both types, each as one JSON line', async () => {
    const ownerEmail = email();
    const r = await adminHere(['bootstrap', '--org', 'CLI Co', '--email', ownerEmail, '--password', PASSWORD, '--plan', 'pro'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const boot = { ...oneJsonLine(r.stdout), email: ownerEmail };
    expect(Object.keys(boot)).toEqual(['orgId', 'userId', 'publicKey', 'internalKey', 'email']);

    const pub = await adminHere(
      [
        'create-key',
        '--org',
        boot.orgId,
        '--user',
        boot.userId,
        '--type',
        'public',
        '--permissions',
        'contacts:read, leads:write',
        '--name',
        'Zapier',
      ],
      env,
    );
    expect(pub).toMatchObject({ code: 0, stderr: '' });
    expect(oneJsonLine(pub.stdout)).toEqual({
      id: expect.any(String),
      name: 'Zapier',
      type: 'public',
      permissions: ['contacts:read', 'leads:write'],
      key: expect.stringMatching(/^ck_live_[0-9A-Za-z]{43}$/),
    });

    const internal = await adminHere(
      ['create-key', '--org', boot.orgId, '--user', boot.userId, '--type', 'internal', '--name', 'Ops'],
      env,
    );
    expect(internal).toMatchObject({ code: 0, stderr: '' });
    const created = oneJsonLine(internal.stdout);
    expect(created).toMatchObject({ type: 'internal', permissions: [] });

    // The way back for a newcomer whose bootstrap keys were lost: the email alone names the user and organization.
    const byEmail = await adminHere(['create-key', '--email', ` ${boot.email.toUpperCase()} `, '--type', 'public', '--name', 'Again'], env);
    expect(byEmail).toMatchObject({ code: 0, stderr: '' });
    expect(oneJsonLine(byEmail.stdout)).toMatchObject({
      name: 'Again',
      type: 'public',
      permissions: [],
      key: expect.stringMatching(/^ck_live_/),
    });

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query('select name, type, permissions from api_keys where organization_id = $1 order by name', [
        boot.orgId,
      ]);
      expect(rows).toEqual([
        { name: 'Again', type: 'public', permissions: [] },
        { name: 'Bootstrap internal key', type: 'internal', permissions: [] },
        {
          name: 'Bootstrap public key',
          type: 'public',
          permissions: [
            'contacts:read',
            'contacts:write',
            'companies:read',
            'companies:write',
            'leads:write',
            'notes:write',
            'events:read',
          ],
        },
        { name: 'Ops', type: 'internal', permissions: [] },
        { name: 'Zapier', type: 'public', permissions: ['contacts:read', 'leads:write'] },
      ]);
      const { rows: plans } = await client.query('select plan from organizations where id = $1', [boot.orgId]);
      expect(plans).toEqual([{ plan: 'pro' }]);
    } finally {
      await client.end();
    }
  });

  it('reports domain refusals with exit 1, a message on stderr and nothing on stdout', async () => {
    const owner = email();
    const [first, other] = (
      await Promise.all([
        adminHere(['bootstrap', '--org', 'Taken', '--email', owner, '--password', PASSWORD], env),
        adminHere(['bootstrap', '--org', 'Other', '--email', email(), '--password', PASSWORD], env),
      ])
    ).map((r) => oneJsonLine(r.stdout));

    const cases: [string[], RegExp][] = [
      [['bootstrap', '--org', 'Again', '--email', owner.toUpperCase(), '--password', PASSWORD], /already exists \(email_taken\)/],
      [
        ['create-key', '--org', first.orgId, '--user', other.userId, '--type', 'public', '--name', 'k'],
        /No user .* in organization .*\(not_found\)/,
      ],
      [
        ['create-key', '--email', 'nobody@cli.example', '--type', 'public', '--name', 'k'],
        /No user with email nobody@cli.example \(not_found\)/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => adminHere(args, env)));
    for (const [i, [args, reason]] of cases.entries()) {
      const r = results[i]!;
      expect({ code: r.code, stdout: r.stdout }, args.join(' ')).toEqual({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(reason);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toContain(PASSWORD);
    }
  });

  it('works through `npm run --silent admin` on a fresh DATA_DIR: migrates first, prints only the JSON line', async () => {
    const home = await freshDataDir('admin-cli');
    try {
      const npm = spawn(
        'npm',
        ['run', '--silent', 'admin', '--', 'bootstrap', '--org', 'Fresh', '--email', email(), '--password', PASSWORD],
        {
          cwd: ROOT,
          env: cleanEnv({ DATA_DIR: home.dataDir }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      npm.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      const code = await new Promise((resolve) => npm.once('exit', resolve));
      expect(code).toBe(0);
      const boot = oneJsonLine(stdout);
      expect(boot.publicKey).toMatch(/^ck_live_/);
      // It started the cluster for itself and stopped it again.
      expect(await clusterPids(home.dataDir)).toEqual([]);

      const again = await admin(['create-key', '--org', boot.orgId, '--user', boot.userId, '--type', 'internal', '--name', 'Second'], {
        DATA_DIR: home.dataDir,
      });
      expect(again).toMatchObject({ code: 0, stderr: '' });
      expect(oneJsonLine(again.stdout).key).toMatch(/^ck_live_/);
    } finally {
      await home.remove();
    }
  });
});

describe('migrate CLI', { timeout: 180_000 }, () => {
  it('applies pending migrations, says which, and then that nothing is pending', async () => {
    const fresh = await createTestDatabase('migrate_cli');
    try {
      const dry = await migrateHere(['--dry-run'], { DATABASE_URL: fresh.url });
      expect(dry).toMatchObject({ code: 0, stderr: '' });
      expect(dry.stdout).toMatch(/^Pending on DATABASE_URL:\n {2}Migration\d+\n/);

      // The applying run goes through the real process, as `npm run migrate` runs it.
      const applied = await run(MIGRATE, [], { DATABASE_URL: fresh.url });
      expect(applied).toMatchObject({ code: 0, stderr: '' });
      expect(applied.stdout).toMatch(/^Applied \d+ migrations? to DATABASE_URL:\n( {2}Migration\d+\n)+$/);
      expect(applied.stdout).toContain(dry.stdout.split('\n')[1]!.trim());

      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      const { rows } = await client.query(`select to_regclass('contacts')::text as t`).finally(() => client.end());
      expect(rows).toEqual([{ t: 'contacts' }]);

      const again = await migrateHere([], { DATABASE_URL: fresh.url });
      expect(again).toEqual({ code: 0, stderr: '', stdout: 'Nothing to apply: DATABASE_URL is up to date.\n' });
      const dryAgain = await migrateHere(['--dry-run'], { DATABASE_URL: fresh.url });
      expect(dryAgain).toEqual({ code: 0, stderr: '', stdout: 'Nothing pending on DATABASE_URL.\n' });
    } finally {
      await fresh.drop();
    }
  });

  it('refuses a bad argument with exit 2 and the usage on stderr, before touching the database; --help prints it', async () => {
    // A database nobody could reach: a bad argument must be refused before any connection is tried.
    const nowhere = { DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' };
    const bad = await migrateHere(['--force'], nowhere);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^migrate: Unknown option '--force'/);
    expect(bad.stderr).toContain('Usage: npm run migrate');
    const help = await migrateHere(['--help'], nowhere);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: npm run migrate/);
    const down = await migrateHere([], nowhere);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^migrate: failed: /);
    expect(down.stderr).not.toContain('nothing');
  });
});
