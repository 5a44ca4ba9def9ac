import type { RateWindow } from '../auth/authenticate.ts';
import { ADDRESS_KEY_FAILURES_PER_MINUTE } from './plans.ts';

/** A key's spent window: refused from memory until `resetAt`. */
export interface SpentWindow {
  window: RateWindow;
  limit: number;
}

export interface KeyGuardOptions {
  /** Failed key look-ups an address may cause per minute before its unknown keys are refused from memory. */
  failuresPerMinute?: number;
  /** Upper bound on each table (spent keys, addresses, known-good keys), so a flood cannot grow memory. */
  maxEntries?: number;
  /** How long a key that authenticated stays "known good" and passes an address's throttle. */
  goodForMs?: number;
}

/**
 * 10,000 entries per table is about 2 MB at most (a 64-character hash and a small object each), and far more than the
 * keys one process sees spent, or the addresses it sees failing, in one minute.
 */
const MAX_ENTRIES = 10_000;
const GOOD_FOR_MS = 10 * 60_000;
const MINUTE_MS = 60_000;

/** Map insertion order is the LRU order: `touch` moves an entry to the back, and the oldest goes first when full. */
function put<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as K);
}

/**
 * What one server process remembers to keep abusive traffic off the database. It only ever refuses: a key is never
 * let in from memory, so revocation, deactivation and password changes still stop every key that is not already
 * refused on its very next request, in every process.
 *
 * - A key whose window is spent is refused (429) until the window ends, without a round trip. The database count is
 *   the truth; this only remembers a refusal the database already gave, for the rest of that window.
 * - An address that keeps presenting keys that do not exist is refused (429) for the rest of the minute once it has
 *   caused `failuresPerMinute` failed look-ups; keys this process has seen authenticate recently still pass (an office
 *   behind one address keeps working while one script in it floods).
 */
export class KeyGuard {
  private readonly spentKeys = new Map<string, SpentWindow>();
  private readonly failures = new Map<string, { windowStart: number; count: number }>();
  private readonly goodKeys = new Map<string, number>();
  private readonly failuresPerMinute: number;
  private readonly maxEntries: number;
  private readonly goodForMs: number;

  constructor(opts: KeyGuardOptions = {}) {
    this.failuresPerMinute = opts.failuresPerMinute ?? ADDRESS_KEY_FAILURES_PER_MINUTE;
    this.maxEntries = opts.maxEntries ?? MAX_ENTRIES;
    this.goodForMs = opts.goodForMs ?? GOOD_FOR_MS;
  }

  /** The spent window remembered for `keyHash`, while it lasts. */
  spent(keyHash: string, now: Date): SpentWindow | undefined {
    const entry = this.spentKeys.get(keyHash);
    if (!entry) return undefined;
    if (entry.window.resetAt.getTime() > now.getTime()) return entry;
    this.spentKeys.delete(keyHash);
    return undefined;
  }

  markSpent(keyHash: string, spent: SpentWindow): void {
    put(this.spentKeys, keyHash, spent, this.maxEntries);
  }

  /** When the address's throttle lifts, if it is throttled now. */
  addressBlockedUntil(address: string | undefined, now: Date): Date | null {
    if (address === undefined) return null;
    const f = this.failures.get(address);
    const windowStart = now.getTime() - (now.getTime() % MINUTE_MS);
    if (!f || f.windowStart !== windowStart || f.count < this.failuresPerMinute) return null;
    return new Date(windowStart + MINUTE_MS);
  }

  recordFailure(address: string | undefined, keyHash: string, now: Date): void {
    this.goodKeys.delete(keyHash);
    if (address === undefined) return;
    const windowStart = now.getTime() - (now.getTime() % MINUTE_MS);
    const f = this.failures.get(address);
    const count = f && f.windowStart === windowStart ? f.count + 1 : 1;
    put(this.failures, address, { windowStart, count }, this.maxEntries);
  }

  isKnownGood(keyHash: string, now: Date): boolean {
    const until = this.goodKeys.get(keyHash);
    return until !== undefined && until > now.getTime();
  }

  recordSuccess(keyHash: string, now: Date): void {
    // Refreshed at most once a minute: the LRU reorder is cheap, but the hot path need not do it on every request.
    const until = this.goodKeys.get(keyHash);
    if (until !== undefined && until - now.getTime() > this.goodForMs - MINUTE_MS) return;
    put(this.goodKeys, keyHash, now.getTime() + this.goodForMs, this.maxEntries);
  }

  /** Entries held per table (tests check the bound). */
  sizes(): { spentKeys: number; addresses: number; goodKeys: number } {
    return { spentKeys: this.spentKeys.size, addresses: this.failures.size, goodKeys: this.goodKeys.size };
  }
}

const guards = new WeakMap<object, KeyGuard>();

/**
 * One guard per running app (keyed by its Deps), so two apps in one test process keep separate memories the way two
 * server processes do.
 */
export function keyGuardOf(owner: object): KeyGuard {
  let g = guards.get(owner);
  if (!g) {
    g = new KeyGuard();
    guards.set(owner, g);
  }
  return g;
}
