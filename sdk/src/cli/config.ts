/**
 * Where `leadwire` keeps the keys saved by `leadwire login`, and the one place that decides which key and server a
 * command uses: --api-key, then LEADWIRE_API_KEY, then the saved key of the kind the command needs.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CliContext } from './context.ts';
import { CliError, ExitCode, type KeyKind, UsageError } from './exit-codes.ts';

/** The server a command talks to when nothing else says: `npm start` on this machine. */
export const DEFAULT_BASE_URL = 'http://localhost:3000/api';

/** A key saved by `leadwire login`, with the server it was checked against. */
export interface SavedKey {
  apiKey: string;
  baseUrl: string;
}

/** The content of `<configDir>/config.json`. */
export interface ConfigFile {
  version: 1;
  keys: Partial<Record<KeyKind, SavedKey>>;
}

/** $LEADWIRE_CONFIG_DIR, else $XDG_CONFIG_HOME/leadwire, else ~/.config/leadwire. */
export function configDirOf(env: Record<string, string | undefined>, home: string = homedir()): string {
  if (env.LEADWIRE_CONFIG_DIR) return env.LEADWIRE_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'leadwire');
  return join(home, '.config', 'leadwire');
}

export function configPathOf(configDir: string): string {
  return join(configDir, 'config.json');
}

/** The saved configuration; an empty one when there is no file yet. */
export async function readConfig(configDir: string): Promise<ConfigFile> {
  const path = configPathOf(configDir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: {} };
    throw new CliError(ExitCode.usage, `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    const keys: ConfigFile['keys'] = {};
    for (const kind of ['public', 'internal'] as const) {
      const saved = parsed.keys?.[kind];
      if (saved && typeof saved.apiKey === 'string' && typeof saved.baseUrl === 'string')
        keys[kind] = { apiKey: saved.apiKey, baseUrl: saved.baseUrl };
    }
    return { version: 1, keys };
  } catch (err) {
    throw new CliError(ExitCode.usage, `${path} is not valid JSON: remove it, or run \`leadwire logout\` and log in again`, { cause: err });
  }
}

/** Saves the configuration: the directory is created 0700, the file written 0600 under a temporary name and renamed. */
export async function writeConfig(configDir: string, config: ConfigFile): Promise<void> {
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(configPathOf(configDir), `${JSON.stringify(config, null, 2)}\n`, 0o600);
}

/** Removes the saved keys (the whole file). Returns whether there was one. */
export async function removeConfig(configDir: string): Promise<boolean> {
  const path = configPathOf(configDir);
  try {
    await rm(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Writes a file so that a reader sees the old content or the new, never half of it, even if the process dies midway:
 * a temporary file in the same directory (created with `mode`, so a secret is never readable by others, not even
 * briefly), flushed to disk, then renamed over the target.
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<void> {
  const tmp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Checks a base URL (http or https) and drops a trailing slash; a bad one is a usage error. */
export function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL such as ${DEFAULT_BASE_URL}, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--base-url must use http or https, got ${url.protocol}`);
  return url.href.replace(/\/+$/, '');
}

/** Where a resolved key came from, for messages. */
export type KeySource = 'flag' | 'env' | 'config';

/**
 * The key and server for a command that needs a key of `kind`. Key: --api-key, then LEADWIRE_API_KEY, then the key of
 * that kind saved by `leadwire login`. Base URL: --base-url, then LEADWIRE_BASE_URL, then the one saved with that key,
 * then http://localhost:3000/api. Throws a CliError (exit 3) naming the ways to give a key when there is none.
 */
export async function resolveCredentials(
  ctx: Pick<CliContext, 'env' | 'configDir'>,
  flags: { apiKey?: string | undefined; baseUrl?: string | undefined },
  kind: KeyKind,
): Promise<{ apiKey: string; baseUrl: string; source: KeySource }> {
  const saved = (await readConfig(ctx.configDir)).keys[kind];
  const baseUrl = normalizeBaseUrl(flags.baseUrl || ctx.env.LEADWIRE_BASE_URL || saved?.baseUrl || DEFAULT_BASE_URL);
  if (flags.apiKey) return { apiKey: flags.apiKey, baseUrl, source: 'flag' };
  if (ctx.env.LEADWIRE_API_KEY) return { apiKey: ctx.env.LEADWIRE_API_KEY, baseUrl, source: 'env' };
  if (saved) return { apiKey: saved.apiKey, baseUrl, source: 'config' };
  const name = kind === 'public' ? 'a Public API key' : 'an Internal key';
  throw new CliError(
    ExitCode.auth,
    `no API key: this command needs ${name}; pass --api-key, set LEADWIRE_API_KEY, or run \`leadwire login\``,
  );
}
