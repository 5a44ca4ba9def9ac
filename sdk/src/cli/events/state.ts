/**
 * Where `leadwire events tail` keeps its place: a small JSON file rewritten (atomically) after each event handled, so a
 * restart resumes with the next event. By default one file per server and key in the config folder, so two keys (two
 * workspaces) or two servers never share a place.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../config.ts';
import { UsageError } from '../exit-codes.ts';

export interface TailState {
  version: 1;
  /** The server and the key (masked) the cursor belongs to, for people reading the file. */
  baseUrl: string;
  key: string;
  /** The position after the last event handled (the SDK listing's `cursor`). */
  cursor: string | null;
  /** The signing secret of --forward-to, when the command made one; kept so the receiver's configuration stays valid. */
  secret?: string;
  updatedAt: string;
}

/** `<configDir>/events-tail/<hash of base URL and key>.json`: the key itself never appears in a file name. */
export function defaultStatePath(configDir: string, baseUrl: string, apiKey: string): string {
  const id = createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex').slice(0, 16);
  return join(configDir, 'events-tail', `${id}.json`);
}

/** The saved state, or undefined when there is none yet; an unreadable or foreign file is a usage error, never ignored. */
export async function loadState(path: string): Promise<TailState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the state file ${path}: ${(err as Error).message}`);
  }
  try {
    const s = JSON.parse(text) as Partial<TailState>;
    if (s.version !== 1 || (s.cursor !== null && typeof s.cursor !== 'string')) throw new Error('not a tail state');
    return s as TailState;
  } catch {
    throw new UsageError(`${path} is not a state file of \`leadwire events tail\`: remove it, or pass --after to start elsewhere`);
  }
}

/** Creates the state's folder (0700) and checks that the file can be written, before anything is read from the feed. */
export async function prepareState(path: string, state: Omit<TailState, 'updatedAt'>, now: number): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await saveState(path, state, now);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot write the state file ${path}: ${(err as Error).message}`);
  }
}

/** Writes the state: mode 0600 (it may hold the signing secret), never half-written. */
export async function saveState(path: string, state: Omit<TailState, 'updatedAt'>, now: number): Promise<void> {
  const full: TailState = { ...state, updatedAt: new Date(now).toISOString() };
  await writeFileAtomic(path, `${JSON.stringify(full, null, 2)}\n`, 0o600);
}
