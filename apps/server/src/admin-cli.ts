/**
 * Operator CLI. Prints exactly one line of JSON on stdout on success, so it can be piped into `jq` or a secrets store;
 * everything else (errors, usage) goes to stderr. Works with the environment of `npm start` (DATABASE_URL, or the
 * embedded cluster under DATA_DIR, joined when the server is running and started for the duration otherwise).
 *
 * Exit codes: 0 done, 1 refused by the domain or environment (email taken, unknown permission, bad config),
 * 2 bad or missing arguments.
 *
 * `runAdmin` is the whole command given its arguments, environment and output streams; admin.ts runs it as a process.
 * Tests call it in the test process for the argument and refusal cases (a spawn costs about half a second each).
 */
import { parseArgs } from 'node:util';
// Only what argument parsing needs is loaded up front (the package indexes pull in the HTTP routers and the database
// driver), so --help and usage errors answer at once; the rest is imported once the arguments are good.
import { AppError, ConfigError, loadConfig } from '@leadwire/core/boot';
import { API_KEY_TYPES, type ApiKeyType, type Db, type Plan, PLANS, PUBLIC_PERMISSIONS } from '@leadwire/db';

const USAGE = `Usage:
  npm run --silent admin -- bootstrap --org <name> --email <email> --password <password> [--plan starter|pro|max]
      Creates an organization, its owner and the default pipeline, plus a Public API key with every permission
      and an Internal key. Prints {"orgId","userId","publicKey","internalKey"}.
  npm run --silent admin -- create-key --org <orgId> --user <userId> --type public|internal [--permissions a,b] --name <name>
  npm run --silent admin -- create-key --email <email> --type public|internal [--permissions a,b] --name <name>
      Creates an API key acting as that user (named by its ids, or by its email alone: the way back for someone
      whose bootstrap keys were lost). Prints {"id","name","type","permissions","key"}.
  npm run --silent admin -- --help

Key values are shown only here, once; only their hash is stored. The password given to bootstrap is visible to other
local users in the process list while the command runs, and may stay in the shell history: run it where that is fine.
Environment: DATABASE_URL, or DATA_DIR for the embedded database (as for npm start). Exit codes: 0 ok, 1 refused,
2 bad arguments.`;

class UsageError extends Error {}

const OPTIONS = {
  org: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  plan: { type: 'string' },
  user: { type: 'string' },
  type: { type: 'string' },
  permissions: { type: 'string' },
  name: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Option = keyof typeof OPTIONS;
type Values = Partial<Record<Option, string | boolean>>;

/** Per command: the options it takes, and those it cannot do without. */
const COMMANDS: Record<string, { takes: readonly Option[]; needs: readonly Option[] }> = {
  bootstrap: { takes: ['org', 'email', 'password', 'plan'], needs: ['org', 'email', 'password'] },
  // --org and --user, or --email in their place (checked in parseCommand).
  'create-key': { takes: ['org', 'user', 'email', 'type', 'permissions', 'name'], needs: ['type', 'name'] },
};

type Command =
  | { kind: 'help' }
  | { kind: 'bootstrap'; name: string; email: string; password: string; plan: Plan }
  | {
      kind: 'create-key';
      who: { orgId: string; userId: string } | { email: string };
      type: ApiKeyType;
      permissions: string[];
      name: string;
    };

/** Minimum for an owner password set from the command line; the application may enforce more. */
const MIN_PASSWORD_LENGTH = 8;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Deliberately loose: catches a swapped argument, not every invalid address. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function parseCommand(argv: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const values = parsed.values as Values;
  if (values.help) return { kind: 'help' };
  const [command, ...extra] = parsed.positionals;
  if (command === undefined) throw new UsageError('Missing command');
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`Unknown command '${command}'`);
  if (extra.length) throw new UsageError(`Unexpected argument '${extra[0]}'`);
  const misplaced = Object.keys(values).filter((k) => !(spec.takes as readonly string[]).includes(k));
  if (misplaced.length) throw new UsageError(`${command} does not take ${misplaced.map((k) => `--${k}`).join(', ')}`);
  const missing = spec.needs.filter((k) => typeof values[k] !== 'string' || values[k].trim() === '');
  if (missing.length) throw new UsageError(`${command} needs ${missing.map((k) => `--${k}`).join(', ')}`);

  // Present and non-empty for every option in `needs`, as checked above.
  const required = (key: Option): string => values[key] as string;
  const oneOf = <T extends string>(key: Option, choices: readonly T[], fallback?: T): T => {
    const v = values[key] ?? fallback;
    if (!(choices as readonly unknown[]).includes(v))
      throw new UsageError(`--${key} must be one of ${choices.join(', ')}, not '${String(v)}'`);
    return v as T;
  };
  const uuid = (key: 'org' | 'user'): string => {
    const v = required(key).trim();
    if (!UUID.test(v)) throw new UsageError(`--${key} must be an id (a UUID), not '${v}'`);
    return v;
  };

  const emailOf = (): string => {
    const email = required('email').trim();
    if (!EMAIL.test(email)) throw new UsageError(`--email is not an email address: '${email}'`);
    return email;
  };

  if (command === 'bootstrap') {
    const email = emailOf();
    const password = required('password');
    // The value is never echoed, not even in this message.
    if (password.length < MIN_PASSWORD_LENGTH) throw new UsageError(`--password must have at least ${MIN_PASSWORD_LENGTH} characters`);
    return { kind: 'bootstrap', name: required('org').trim(), email, password, plan: oneOf('plan', PLANS, 'starter') };
  }
  const given = (key: Option) => typeof values[key] === 'string' && values[key].trim() !== '';
  if (given('email') && (given('org') || given('user')))
    throw new UsageError('create-key takes --email or --org and --user, not both: the email names the user and its organization');
  if (!given('email') && !(given('org') && given('user')))
    throw new UsageError(`create-key needs --org and --user, or --email in their place`);
  const permissions =
    typeof values.permissions === 'string'
      ? values.permissions
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  const type = oneOf('type', API_KEY_TYPES);
  // Bad arguments like any other (exit 2), judged before the database is opened, with the list to choose from.
  const unknown = permissions.filter((p) => !(PUBLIC_PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length)
    throw new UsageError(`--permissions: unknown ${unknown.map((p) => `'${p}'`).join(', ')}; valid: ${PUBLIC_PERMISSIONS.join(', ')}`);
  if (type === 'internal' && permissions.length)
    throw new UsageError("--permissions applies to public keys only: an internal key carries its user's reach");
  return {
    kind: 'create-key',
    who: given('email') ? { email: emailOf() } : { orgId: uuid('org'), userId: uuid('user') },
    type,
    permissions,
    name: required('name').trim(),
  };
}

async function execute(db: Db, cmd: Exclude<Command, { kind: 'help' }>): Promise<object> {
  const { bootstrap, createApiKey, userOfEmail } = await import('@leadwire/core/runtime');
  if (cmd.kind === 'bootstrap') {
    const { orgId, userId, publicKey, internalKey } = await bootstrap(db, {
      name: cmd.name,
      ownerEmail: cmd.email,
      ownerPassword: cmd.password,
      plan: cmd.plan,
    });
    return { orgId, userId, publicKey, internalKey };
  }
  const { orgId, userId } = 'email' in cmd.who ? await userOfEmail(db, cmd.who.email) : cmd.who;
  const { id, value } = await createApiKey(db, {
    orgId,
    userId,
    name: cmd.name,
    type: cmd.type,
    permissions: cmd.permissions,
  });
  return { id, name: cmd.name, type: cmd.type, permissions: [...new Set(cmd.permissions)], key: value };
}

function describeAppError(err: AppError): string {
  const issues = (err.details.issues ?? []) as { path: string; message: string }[];
  const detail = issues.map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}`).join('; ');
  return `${err.message}${detail ? `: ${detail}` : ''} (${err.code})`;
}

/** Where a CLI run writes, and the environment it reads (process.env for the real command): the admin and migrate CLIs. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Runs one admin command; resolves to its exit code, having written its output. Never rejects. */
export async function runAdmin(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    if (err instanceof AppError) {
      io.stderr(`admin: ${describeAppError(err)}\n`);
    } else if (err instanceof ConfigError) {
      io.stderr(`admin: ${err.message}\n`);
    } else {
      // Only the message: a stack or a driver error object could carry connection details.
      io.stderr(`admin: failed: ${messageOf(err)}\n`);
    }
    return 1;
  }
}

async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommand(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`admin: ${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (cmd.kind === 'help') {
    io.stdout(`${USAGE}\n`);
    return 0;
  }

  const config = loadConfig(io.env);
  const { setPasswordHashCost } = await import('@leadwire/core/runtime');
  setPasswordHashCost(config.PASSWORD_HASH_COST);
  const { migrateUp, openDatabase, openDb, openOrm } = await import('@leadwire/db');
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  // Failures while closing, after the work itself succeeded: reported, but they do not undo a printed result.
  const closing: unknown[] = [];
  try {
    const orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    try {
      // A fresh DATA_DIR or database works: the schema is brought up to date first, exactly as `npm start` would.
      await migrateUp(orm);
      const output = await execute(await openDb(orm), cmd);
      // Printed as soon as it is committed: a key value lost to a later clean-up error could never be recovered.
      io.stdout(`${JSON.stringify(output)}\n`);
    } finally {
      await orm.close(true).catch((err: unknown) => closing.push(err));
    }
  } finally {
    await db.stop().catch((err: unknown) => closing.push(err));
  }
  for (const err of closing) io.stderr(`admin: done, but closing the database failed: ${messageOf(err)}\n`);
  return 0;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
