import type { Plan, Role } from '@leadwire/db';
import { LRUCache } from 'lru-cache';
import { type Clock, systemClock } from '../clock.ts';
import type { RateWindow } from './window.ts';
import { LookupGate } from './lookup-gate.ts';

/** A key's spent window: refused from memory until `resetAt`. */
export interface SpentWindow {
  window: RateWindow;
  limit: number;
}

/** What the process learnt about a key from one look-up, to remember a refusal the database gave. */
export interface KeySighting {
  /** `<surface>:<hash>`: the spent-window memory is per surface, as the counting is. */
  guardKey: string;
  keyHash: string;
  /** The user who created the key: a change to that user (deactivation, credential epoch) ends the key. */
  ownerId: string;
  /** The key and its workspace: a refusal from memory is still counted for the overview (limits/api-usage.ts). */
  keyId?: string;
  orgId?: string;
  expiresAt: Date | null;
  /** The guard's generation when the look-up started: a change to this key or its owner heard since voids what it saw. */
  generation: number;
}

export interface KeyGuardOptions {
  /** Upper bound on each table (spent keys, bad keys, good keys), so a flood cannot grow memory. */
  maxEntries?: number;
  /** How long a key that authenticated skips the queue of unseen keys, and a key that failed is answered from memory. */
  rememberMs?: number;
  /** Look-ups of unseen keys in flight at once in this process. */
  lookupConcurrency?: number;
  /** What the tables' expiry reads (the app's clock). */
  clock?: Clock;
}

/** What `admit` decided: refuse from memory, or look the key up (then call `release`, once). */
export type Admission = { bad: true } | { bad: false; generation: number; release: () => void };

/**
 * 10,000 entries per table is about 2 MB at most (a 64-character hash and a small object each), and far more than the
 * keys one process sees spent in one minute. The bad-key table holds more than the bench's flood of 5,000 keys.
 */
const MAX_ENTRIES = 10_000;
const REMEMBER_MS = 10 * 60_000;
/** Refreshing a good key's entry at most once a minute keeps the LRU reorder off most requests. */
const REFRESH_MS = 60_000;
/** last_used_at is stamped at most once a minute. */
const TOUCH_MS = 60_000;
const DEFAULT_CONCURRENCY = 4;
/** Changes kept to judge a look-up that was under way while they were heard; an older look-up is not remembered. */
const CHANGE_LOG = 256;

/** A change heard: one key, one user (whose reactivation may revive unknown hashes), or everything. */
interface Change {
  gen: number;
  keyHash?: string;
  ownerId?: string;
  revives?: boolean;
  all?: boolean;
}

/** A refused key: why, when its holder may be told (the secret matched a key its owner stopped). */
interface BadEntry {
  reason: string | undefined;
}

interface SpentEntry extends SpentWindow {
  ownerId: string;
  keyId?: string | undefined;
  orgId?: string | undefined;
}

/**
 * What a look-up learnt of a key that stands, so that its next requests need no look-up by hash: who it acts for and
 * what it may do. None of it can change while the key lives (a key's type, organization, owner and permissions are
 * fixed at creation); what can end it (revocation, expiry, the owner's deactivation or new credentials) is checked by
 * the database in the statement of every request (auth/envelope-sql.ts), and heard here to drop the entry.
 */
export interface KnownKey {
  keyId: string;
  orgId: string;
  ownerId: string;
  type: 'public' | 'internal';
  permissions: readonly string[];
  expiresAt: Date | null;
  /**
   * As read at the look-up. /v1 decides nothing on the owner's role, and the statements that decide on the plan (the
   * contact cap) read the plan and the booster themselves.
   */
  role: Role;
  plan: Plan;
  contactBooster: number;
}

/** The good-key table's value: the key, when the look-up told who it is. */
interface GoodEntry {
  key?: KnownKey;
}

/**
 * A bounded LRU table whose entries expire on `clock` (lru-cache reads `performance.now()` unless given another), with
 * no time cached between reads (`ttlResolution: 0`), so a test that moves the clock sees the table move with it.
 */
function table<V extends object>(max: number, clock: Clock): LRUCache<string, V> {
  return new LRUCache<string, V>({ max, ttlResolution: 0, perf: { now: () => clock.now().getTime() } });
}

/** lru-cache keeps an entry while its age is at most its ttl; ours end at `until` itself, hence one millisecond less. */
const ttlTo = (until: number, now: number) => until - now - 1;

const noop = () => {};
/** The good-key table's value when nothing but the key's standing is known. */
const GOOD: GoodEntry = {};

/**
 * What one server process remembers to keep abusive traffic off the database, and never anything that would let a key
 * in: the database decides every key that is not refused. Refusals are answered from memory only while the process
 * hears every key change (`setLive`, from the LISTEN connection): revocation, deactivation, a password change or reset
 * and log-out-all drop what they affect (`keyChanged`, `ownerChanged`) in every process, so a revoked key gets 401
 * on its next request even when its window was spent. While the channel is down nothing is answered from memory.
 *
 * - A key whose window is spent is refused (429) until the window ends (or the key expires), without a round trip.
 * - A key the database did not find is refused (401) from memory; only a new key can make a hash valid, and creating
 *   one is heard like any change.
 * - Keys this process has not seen authenticate are looked up one at a time per key and `lookupConcurrency` at a time
 *   in all, so a flood of made-up keys holds a few pool connections at most; a real key waits its turn, never refused.
 *   Nothing depends on the client's address: a valid key is never refused for other clients' traffic.
 */
export class KeyGuard {
  private readonly spentKeys: LRUCache<string, SpentEntry>;
  private readonly badKeys: LRUCache<string, BadEntry>;
  private readonly goodKeys: LRUCache<string, GoodEntry>;
  private readonly touched: LRUCache<string, object>;
  private readonly clock: Clock;
  private readonly probes = new Map<string, Promise<void>>();
  private readonly gate: LookupGate;
  private readonly rememberMs: number;
  private readonly changes: Change[] = [];
  private live = false;
  private gen = 0;

  constructor(opts: KeyGuardOptions = {}) {
    const max = opts.maxEntries ?? MAX_ENTRIES;
    this.clock = opts.clock ?? systemClock;
    this.spentKeys = table(max, this.clock);
    this.badKeys = table(max, this.clock);
    this.goodKeys = table(max, this.clock);
    this.touched = table(max, this.clock);
    this.rememberMs = opts.rememberMs ?? REMEMBER_MS;
    this.gate = new LookupGate(opts.lookupConcurrency ?? DEFAULT_CONCURRENCY);
  }

  get generation(): number {
    return this.gen;
  }

  get isLive(): boolean {
    return this.live;
  }

  /**
   * Whether every key change reaches this process. Both edges forget all refusals: going down, because changes will
   * be missed; coming up, because some were.
   */
  setLive(live: boolean): void {
    this.forgetRefusals();
    this.live = live;
  }

  private heard(change: Omit<Change, 'gen'>): void {
    this.changes.push({ ...change, gen: ++this.gen });
    if (this.changes.length > CHANGE_LOG) this.changes.shift();
  }

  /**
   * Whether a change heard since `generation` may touch what a look-up saw of this key (or, without an owner, of this
   * unknown hash). Unrelated changes (another tenant's new key) do not void it, so they cost no extra look-ups.
   */
  private changedSince(generation: number, keyHash: string, ownerId: string | null): boolean {
    if (generation === this.gen) return false;
    const oldest = this.changes[0];
    if (!oldest || oldest.gen > generation + 1) return true;
    for (let i = this.changes.length - 1; i >= 0; i--) {
      const c = this.changes[i]!;
      if (c.gen <= generation) break;
      if (c.all || c.keyHash === keyHash || (ownerId === null ? c.revives : c.ownerId === ownerId)) return true;
    }
    return false;
  }

  /** A key was created, revoked, expired or deleted: nothing remembered about its hash holds any more. */
  keyChanged(keyHash: string): void {
    this.heard({ keyHash });
    this.spentKeys.delete(`public:${keyHash}`);
    this.spentKeys.delete(`internal:${keyHash}`);
    this.badKeys.delete(keyHash);
    this.goodKeys.delete(keyHash);
  }

  /** A user's credentials changed (deactivated, reactivated, new epoch): their keys' spent windows are forgotten. */
  ownerChanged(userId: string, reactivated: boolean): void {
    this.heard({ ownerId: userId, revives: reactivated });
    const theirs = [...this.spentKeys.entries()].filter(([, e]) => e.ownerId === userId);
    for (const [k] of theirs) this.spentKeys.delete(k);
    const known = [...this.goodKeys.entries()].filter(([, e]) => e.key?.ownerId === userId);
    for (const [k] of known) this.goodKeys.delete(k);
    // A reactivated user's keys may be valid again (only if their epoch did not move); bad hashes carry no owner.
    if (reactivated) this.badKeys.clear();
  }

  /** Forgets every refusal: for a change the process cannot place (an unreadable notification). */
  forgetRefusals(): void {
    this.heard({ all: true });
    this.spentKeys.clear();
    this.badKeys.clear();
  }

  /** The spent window remembered for `guardKey`, until the window ends (or the key expires) and while changes are heard. */
  spent(guardKey: string): (SpentWindow & { keyId?: string | undefined; orgId?: string | undefined }) | undefined {
    if (!this.live) return undefined;
    return this.spentKeys.get(guardKey);
  }

  markSpent(key: KeySighting, spent: SpentWindow): void {
    if (!this.live || this.changedSince(key.generation, key.keyHash, key.ownerId)) return;
    const until = Math.min(spent.window.resetAt.getTime(), key.expiresAt?.getTime() ?? Infinity);
    // One reading for both the time left and the entry's start: the table reading the clock again a millisecond later
    // would keep the window that much past its end, and refuse a request at the end itself.
    const now = this.clock.now().getTime();
    const ttl = ttlTo(until, now);
    if (ttl < 1) this.spentKeys.delete(key.guardKey);
    else this.spentKeys.set(key.guardKey, { ...spent, ownerId: key.ownerId, keyId: key.keyId, orgId: key.orgId }, { ttl, start: now });
  }

  isKnownBad(keyHash: string): boolean {
    return this.live && this.badKeys.get(keyHash) !== undefined;
  }

  /** `reason`: what the key's holder is told on each refusal from memory (see `badReason`); none for an unknown key. */
  recordBad(keyHash: string, generation: number, reason?: string): void {
    this.goodKeys.delete(keyHash);
    if (!this.live || this.changedSince(generation, keyHash, null)) return;
    this.badKeys.set(keyHash, { reason }, { ttl: this.rememberMs - 1 });
  }

  /** Why a key remembered as bad was refused, when the refusal may say so (only for a key whose secret matched). */
  badReason(keyHash: string): string | undefined {
    return this.badKeys.peek(keyHash)?.reason;
  }

  /** Read without moving the key up the LRU order: `recordGood` does that, at most once a minute. */
  isKnownGood(keyHash: string): boolean {
    return this.goodKeys.has(keyHash);
  }

  /**
   * Lets the key skip the queue, and with `key` (what its look-up read, started at `generation`) spares its next
   * requests the look-up by hash: the database still judges the key on every request, by id.
   */
  recordGood(keyHash: string, key?: KnownKey, generation?: number): void {
    const entry = this.goodKeys.peek(keyHash);
    if (key && !entry?.key) {
      // Not remembered unless every change is heard, nor when a change to this key or its owner came in meanwhile.
      const stale = !this.live || generation === undefined || this.changedSince(generation, keyHash, key.ownerId);
      this.goodKeys.set(keyHash, stale ? GOOD : { key }, { ttl: this.rememberMs - 1 });
      return;
    }
    if (this.goodKeys.getRemainingTTL(keyHash) > this.rememberMs - 1 - REFRESH_MS) return;
    this.goodKeys.set(keyHash, entry ?? GOOD, { ttl: this.rememberMs - 1 });
  }

  /** The key behind a hash, while every change is heard and until it expires; undefined when it must be looked up. */
  known(keyHash: string): KnownKey | undefined {
    if (!this.live) return undefined;
    const key = this.goodKeys.peek(keyHash)?.key;
    if (!key || (key.expiresAt !== null && key.expiresAt.getTime() <= this.clock.now().getTime())) return undefined;
    return key;
  }

  /**
   * Whether a request of key `keyId` at `now` should stamp its last_used_at: not when this process stamped it less than
   * a minute ago (the database skips a stamp younger than a minute anyway; this spares the statement that would).
   */
  touchDue(keyId: string, now: number): boolean {
    if (this.touched.has(keyId)) return false;
    this.touched.set(keyId, GOOD, { ttl: TOUCH_MS - 1, start: now });
    return true;
  }

  /** The database refused a key this process knew: it is looked up again next time. */
  forgetKey(keyHash: string): void {
    this.goodKeys.delete(keyHash);
  }

  /**
   * Decides how a key is looked up. A known bad key is refused; a known good one goes straight to the database; an
   * unseen one waits for a look-up of the same hash already under way (whose outcome then decides), or for a place
   * in the gate. The generation is read once the look-up may start, so a change heard while it waited counts.
   */
  async admit(keyHash: string): Promise<Admission> {
    for (;;) {
      if (this.isKnownBad(keyHash)) return { bad: true };
      if (this.isKnownGood(keyHash)) return { bad: false, generation: this.gen, release: noop };
      const pending = this.probes.get(keyHash);
      if (pending) {
        await pending;
        continue;
      }
      let done = noop;
      this.probes.set(keyHash, new Promise<void>((resolve) => (done = resolve)));
      const leave = await this.gate.enter();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.probes.delete(keyHash);
        leave();
        done();
      };
      return { bad: false, generation: this.gen, release };
    }
  }

  /** Entries held per table (tests check the bound). */
  sizes(): { spentKeys: number; badKeys: number; goodKeys: number } {
    return { spentKeys: this.spentKeys.size, badKeys: this.badKeys.size, goodKeys: this.goodKeys.size };
  }

  /** The gate's figures: look-ups of unseen keys so far, the most in flight at once, how many wait now. */
  lookups(): ReturnType<LookupGate['stats']> {
    return this.gate.stats();
  }
}

const guards = new WeakMap<object, KeyGuard>();

/**
 * One guard per running app (keyed by its Deps), so two apps in one test process keep separate memories the way two
 * server processes do. It answers nothing from memory until the app's key-change listener is live.
 */
export function keyGuardOf(deps: { config: { KEY_LOOKUP_CONCURRENCY: number }; clock: Clock }): KeyGuard {
  let g = guards.get(deps);
  if (!g) {
    g = new KeyGuard({ lookupConcurrency: deps.config.KEY_LOOKUP_CONCURRENCY, clock: deps.clock });
    guards.set(deps, g);
  }
  return g;
}
