import { positionals } from '../args.ts';
import { configPathOf, DEFAULT_BASE_URL, normalizeBaseUrl, readConfig, writeConfig } from '../config.ts';
import type { CliContext, Command } from '../context.ts';
import { CliError, ExitCode, type KeyKind, UsageError } from '../exit-codes.ts';
import { parseCommand } from '../options.ts';
import { maskKey, messages } from '../output.ts';

const USAGE = `Usage: leadwire login [--api-key <key>] [--base-url <url>]

Checks an API key against the server and saves it for the other commands, under its type:
a Public API key (used by \`leadwire import\`) or an Internal key (used by \`leadwire listen\` and
\`leadwire trigger\`). Log in once with each to use every command.

Options:
  --api-key <key>   the key (ck_live_…); without it, the key is asked for on a terminal (typing
                    is not shown) or read from standard input: \`leadwire login < key.txt\`;
                    the JSON that \`npm run admin -- bootstrap\` prints logs in with both of its
                    keys: \`npm run --silent admin -- bootstrap … | npx leadwire login\`
  --base-url <url>  the server's API root, default LEADWIRE_BASE_URL or ${DEFAULT_BASE_URL}
  -h, --help        show this help

The key is saved in config.json in $LEADWIRE_CONFIG_DIR, $XDG_CONFIG_HOME/leadwire or
~/.config/leadwire (file mode 0600). \`leadwire logout\` removes it.
`;

// Keys are printable ASCII; anything else (a pasted newline, a smart quote) would only fail later, less clearly.
const KEY_SHAPE = /^[\x21-\x7e]{8,255}$/;
// A pasted key is a few dozen bytes: refuse to buffer a whole file piped in by mistake.
const MAX_STDIN_BYTES = 4096;
const CHECK_TIMEOUT_MS = 15_000;

export const loginCommand: Command = {
  name: 'login',
  summary: 'check an API key and save it for the other commands',
  usage: USAGE,
  async run(ctx, argv) {
    const { values, positionals: rest } = parseCommand(argv, {});
    positionals(rest, []);
    const baseUrl = normalizeBaseUrl(values['base-url'] || ctx.env.LEADWIRE_BASE_URL || DEFAULT_BASE_URL);
    const apiKeys = keysOf((values['api-key'] ?? (await readKey(ctx))).trim());
    for (const apiKey of apiKeys) {
      if (!KEY_SHAPE.test(apiKey))
        throw new UsageError('that does not look like an API key (expected something like ck_live_…, printable characters, no spaces)');
    }
    // Every key is checked before any is saved: a bad second key leaves the config as it was.
    const kinds: KeyKind[] = [];
    try {
      for (const apiKey of apiKeys) kinds.push(await kindOfKey(ctx, baseUrl, apiKey));
    } catch (err) {
      if (!(err instanceof CliError) || err.exitCode === ExitCode.interrupted) throw err;
      throw new CliError(err.exitCode, `${err.message}\n${howToRecover(baseUrl, err.exitCode)}`, { cause: err });
    }
    const config = await readConfig(ctx.configDir);
    apiKeys.forEach((apiKey, i) => (config.keys[kinds[i]!] = { apiKey, baseUrl }));
    await writeConfig(ctx.configDir, config);
    apiKeys.forEach((apiKey, i) => {
      const kind = kinds[i]!;
      const name = kind === 'public' ? 'Public API key' : 'Internal key';
      messages(ctx).info(`Logged in to ${baseUrl} with the ${name} ${maskKey(apiKey)}; saved in ${configPathOf(ctx.configDir)}.`);
      ctx.stdout.write(`${JSON.stringify({ kind, baseUrl, key: maskKey(apiKey) })}\n`);
    });
    return ExitCode.ok;
  },
};

/**
 * What to do after a failed login. Keys piped from `admin bootstrap` were printed once and are gone from the screen
 * when this fails, and bootstrapping again answers email_taken: so the message names both ways to new keys.
 */
export function howToRecover(baseUrl: string, exitCode: number): string {
  const origin = baseUrl.replace(/\/api$/, '');
  const where =
    exitCode === ExitCode.auth
      ? ''
      : 'Is the server running there? For another host or port, pass --base-url or set LEADWIRE_BASE_URL (e.g. http://localhost:3001/api).\n';
  return (
    `Nothing was saved. ${where}` +
    `To get new keys: the console's API keys screen (${origin}/app/keys), or, where the server runs, ` +
    '`npm run --silent admin -- create-key --email <your email> --type public --name CLI` (and `--type internal` for an Internal key).'
  );
}

/**
 * Which kind of key this is, asked of the server: contact search is a /v1 route, so a Public key gets 200 or 404
 * (or 403 insufficient_scope without contacts:read), an Internal key 403 wrong_api_surface, a bad key 401.
 */
export async function kindOfKey(ctx: Pick<CliContext, 'fetch' | 'signal'>, baseUrl: string, apiKey: string): Promise<KeyKind> {
  let res: Response;
  try {
    res = await ctx.fetch(`${baseUrl}/v1/contacts/search?email=${encodeURIComponent('leadwire-cli-login@example.com')}`, {
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)]),
    });
  } catch (err) {
    if (ctx.signal.aborted) throw new CliError(ExitCode.interrupted, 'interrupted');
    throw new CliError(ExitCode.server, `could not reach ${baseUrl}: ${(err as Error).message}`, { cause: err });
  }
  const body = (await res.json().catch(() => ({}))) as { code?: string };
  if (res.status === 200 || res.status === 404) return 'public';
  if (res.status === 403 && body.code === 'insufficient_scope') return 'public';
  if (res.status === 403 && body.code === 'wrong_api_surface') return 'internal';
  if (res.status === 401)
    throw new CliError(ExitCode.auth, `${baseUrl} refused the key ${maskKey(apiKey)} (401): it is unknown, revoked or expired`);
  throw new CliError(
    ExitCode.server,
    `${baseUrl} answered ${res.status} ${body.code ?? ''} while checking the key: is it a Leadwire server?`,
  );
}

/**
 * The keys given: one key as typed, or the JSON object `admin bootstrap` prints, whose publicKey and internalKey are
 * both logged in, so a fresh organization is one pipe away from every command.
 */
function keysOf(input: string): string[] {
  if (!input.startsWith('{')) return [input];
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    throw new UsageError('standard input starts with { but is not JSON: give a key, or the JSON `admin bootstrap` prints');
  }
  const record = (parsed ?? {}) as Record<string, unknown>;
  const keys = [record.publicKey, record.internalKey].filter((k): k is string => typeof k === 'string');
  if (!keys.length) throw new UsageError('the JSON given holds no publicKey nor internalKey (as `admin bootstrap` prints)');
  return keys;
}

async function readKey(ctx: CliContext): Promise<string> {
  const stdin = ctx.stdin;
  if (!stdin) throw new UsageError('no key: pass --api-key, or give it on standard input');
  if (stdin.isTTY && stdin.setRawMode) return promptHidden(ctx, stdin as Required<NonNullable<CliContext['stdin']>>);
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.length > MAX_STDIN_BYTES) throw new UsageError('standard input is too long for an API key');
  }
  return text;
}

/** Asks for the key on the terminal with echo off (raw mode), so it never appears on screen or in a recording. */
function promptHidden(ctx: CliContext, stdin: Required<NonNullable<CliContext['stdin']>>): Promise<string> {
  ctx.stderr.write('API key (input hidden): ');
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      ctx.stderr.write('\n');
    };
    const onData = (chunk: string | Buffer) => {
      for (const ch of String(chunk)) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003' || ch === '\u0004') {
          finish();
          reject(new CliError(ExitCode.interrupted, 'interrupted'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
