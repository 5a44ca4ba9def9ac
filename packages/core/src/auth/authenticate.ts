import { standingKeyActors } from './standing-keys.ts';
import { type ApiKeyType, type DB, type Db, expressionBuilder, qb, sql, statement } from '@leadwire/db';
import { type AppError, errors } from '../errors.ts';
import type { KeyGuard, KeySighting } from '../limits/key-guard.ts';
import { rateHeaders } from '../limits/rate-limit.ts';
import type { RateWindow } from '../limits/window.ts';
import type { Actor } from './actor.ts';
import { bearerToken, hashKey, isWellFormedKey, KEY_PREFIX } from './key-material.ts';
import { SESSION_PREFIX } from './sessions.ts';
import { refusals } from '../metrics/registry.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const ONE = sql.lit(1).as('count');
const counters = expressionBuilder<DB, 'rate_limit_counters'>();
/** A request more in a window that already has some. */
const bumpCount = { count: counters(counters.ref('rate_limit_counters.count'), '+', sql.lit(1)) };

/**
 * One round trip resolves the key, checks its owner's state and counts the request in the shared per-minute window.
 * Every key that is not refused from memory is checked here, and every process drops its remembered refusals of a key
 * as soon as it hears the key or its owner change (auth/key-changes.ts), so revocation, deactivation and password
 * changes take effect on the next request in every server process. The last-used stamp is written at most once a minute to keep the hot row cool.
 * Time comes in as parameters (the caller's clock): now, the minute's and the day's start, and now less a minute.
 */
export const AUTHENTICATE = statement<{
  keyHash: string;
  now: Date;
  minute: Date;
  surface: ApiKeyType;
  day: Date;
  minuteAgo: Date;
}>()((p) =>
  qb
    .with('k', () =>
      standingKeyActors(p.now)
        .leftJoin('contact_counters as n', 'n.organization_id', 'k.organization_id')
        .select((eb) => eb.fn.coalesce('n.contact_count', sql.lit(0)).as('contact_count'))
        .where('k.key_hash', '=', p.keyHash),
    )
    .with('hit', (db) =>
      db
        .insertInto('rate_limit_counters')
        .columns(['bucket', 'window_start', 'count'])
        .expression(
          db
            .selectFrom('k')
            .select((eb) => [
              sql<string>`'key:' || ${eb.ref('k.id')}`.as('bucket'),
              sql<Date>`${p.minute}::timestamptz`.as('window_start'),
              ONE,
            ])
            .where('k.type', '=', p.surface),
        )
        .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet(bumpCount))
        .returning('count'),
    )
    .with('hit_day', (db) =>
      db
        .insertInto('rate_limit_counters')
        .columns(['bucket', 'window_start', 'count'])
        .expression(
          db
            .selectFrom('k')
            .select((eb) => [
              sql<string>`'key:' || ${eb.ref('k.id')} || ':day'`.as('bucket'),
              sql<Date>`${p.day}::timestamptz`.as('window_start'),
              ONE,
            ])
            .where('k.type', '=', p.surface)
            .where('k.type', '=', sql.lit('internal')),
        )
        .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet(bumpCount))
        .returning('count'),
    )
    .with('touch', (db) =>
      db
        .updateTable('api_keys')
        .set({ last_used_at: sql<Date>`${p.now}::timestamptz` })
        .where('id', '=', db.selectFrom('k').select('k.id'))
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`${p.minuteAgo}::timestamptz`)])),
    )
    .selectFrom('k')
    .select((eb) => [
      'k.id',
      'k.organization_id',
      'k.created_by_id',
      'k.type',
      'k.permissions',
      'k.expires_at',
      'k.role',
      'k.plan',
      'k.contact_booster',
      'k.contact_count',
      eb.selectFrom('hit').select('count').as('hits'),
      eb.selectFrom('hit_day').select('count').as('day_hits'),
    ]),
);

/** The statement's parameters for a key hash, a surface and the current time. */
function authenticateParams(keyHash: string, surface: ApiKeyType, now: Date) {
  const t = now.getTime();
  return {
    keyHash,
    now,
    minute: new Date(t - (t % MINUTE_MS)),
    surface,
    day: new Date(t - (t % DAY_MS)),
    minuteAgo: new Date(t - MINUTE_MS),
  };
}

export interface Authenticated {
  actor: Actor;
  /** The per-minute window; null when the key was refused for its surface (not counted). */
  window: RateWindow | null;
  /** The per-day window: Internal keys only. */
  dayWindow: RateWindow | null;
  /** Names the key in the process's KeyGuard, to remember it once its window is spent. */
  sighting: KeySighting;
}

/** A refusal the process can give from memory alone, with the headers that go with it. */
export interface KnownRefusal {
  error: AppError;
  headers: Record<string, number>;
  /** The key whose spent window refused it, for the overview's count of 429s; absent for an unknown key. */
  caller?: { orgId: string; keyId: string };
}

export const INVALID_KEY = 'Invalid, revoked or expired API key';

/**
 * A live (not revoked, unexpired) key with this hash that the authentication statement refused: its owner stopped it.
 * Run only after that refusal, with the hash of the full secret the caller sent, so only the key's holder learns why.
 */
const STOPPED_KEY = statement<{ keyHash: string; now: Date }>()((p) =>
  qb
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.created_by_id')
    .select((eb) => ['u.active', eb(eb.ref('u.credential_epoch'), '=', eb.ref('k.owner_epoch')).as('current_epoch')])
    .where('k.key_hash', '=', p.keyHash)
    .where('k.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', sql<Date>`${p.now}::timestamptz`)])),
);

/** Why a key the statement refused stopped working, in words its holder can act on; undefined when it is just unknown. */
export async function stoppedReason(db: Db, keyHash: string, now: Date): Promise<string | undefined> {
  const [row] = await db.run(STOPPED_KEY, { keyHash, now });
  if (!row) return undefined;
  if (!row.active)
    return "This API key stopped working when its owner's account was deactivated; an owner or admin can reactivate the account, or create a new key";
  if (!row.current_epoch) {
    return "This API key stopped working when its owner's credentials changed (a password change or reset, log-out-all, or a deactivation): keys end with the owner's sessions; create a new key";
  }
  return undefined;
}

/** What a malformed credential is told: a session token (the application's) gets told which credential /v1 takes. */
export function malformed(value: string, surface: ApiKeyType): AppError {
  if (surface === 'public' && value.startsWith(SESSION_PREFIX)) {
    return errors.unauthorized(`/v1 takes an API key (${KEY_PREFIX}…), not a session token: create a Public API key for this integration`);
  }
  return errors.unauthorized('Malformed API key');
}

export function refusalFor(guard: KeyGuard, keyHash: string, surface: ApiKeyType, now: Date): KnownRefusal | null {
  const spent = guard.spent(`${surface}:${keyHash}`);
  if (spent) {
    const headers = rateHeaders(spent.window, spent.limit, now.getTime());
    refusals.inc({ reason: 'rate_limited' });
    return {
      error: errors.rateLimited(headers['x-ratelimit-reset']),
      headers: { ...headers, 'retry-after': headers['x-ratelimit-reset'] },
      ...(spent.orgId && spent.keyId ? { caller: { orgId: spent.orgId, keyId: spent.keyId } } : {}),
    };
  }
  if (guard.isKnownBad(keyHash)) {
    refusals.inc({ reason: 'known_bad_key' });
    return { error: errors.unauthorized(guard.badReason(keyHash) ?? INVALID_KEY), headers: {} };
  }
  return null;
}

/**
 * The refusal `authenticate` would answer without a round trip (a spent window, a key the database did not find), for
 * the HTTP layer to give before it reads the body. Null when the request has to be looked at properly.
 */
export function knownRefusal(guard: KeyGuard, authorization: string | undefined, surface: ApiKeyType, now: Date): KnownRefusal | null {
  const value = bearerToken(authorization);
  if (!value || !isWellFormedKey(value)) return null;
  return refusalFor(guard, hashKey(value), surface, now);
}

export interface AuthenticateOptions {
  /** The current time, from `deps.clock`. */
  now: Date;
  guard: KeyGuard;
  setHeader: (name: string, value: string | number) => void;
}

/**
 * Resolves `Authorization: Bearer <key>` for the given surface. A key of the other type is refused with
 * wrong_api_surface and is not counted against the surface's rate limit. Refusals the process already knows (a spent
 * window, a key the database did not find) are answered from memory, with no round trip; keys the process has not
 * seen authenticate wait for a place in its look-up gate (see KeyGuard).
 */
export async function authenticate(
  db: Db,
  authorization: string | undefined,
  surface: ApiKeyType,
  o: AuthenticateOptions,
): Promise<Authenticated> {
  const value = bearerToken(authorization);
  if (!value) {
    refusals.inc({ reason: 'missing_key' });
    throw errors.unauthorized('Missing API key: send Authorization: Bearer <API_KEY>');
  }
  if (!isWellFormedKey(value)) {
    refusals.inc({ reason: 'malformed_key' });
    throw malformed(value, surface);
  }
  const keyHash = hashKey(value);
  const refusal = refusalFor(o.guard, keyHash, surface, o.now);
  if (refusal) {
    for (const [name, v] of Object.entries(refusal.headers)) o.setHeader(name, v);
    throw refusal.error;
  }
  const admission = await o.guard.admit(keyHash);
  if (admission.bad) {
    refusals.inc({ reason: 'known_bad_key' });
    throw errors.unauthorized(o.guard.badReason(keyHash) ?? INVALID_KEY);
  }
  let row: NonNullable<(typeof AUTHENTICATE)['row']> | undefined;
  let reason: string | undefined;
  try {
    [row] = await db.run(AUTHENTICATE, authenticateParams(keyHash, surface, o.now));
    if (row) o.guard.recordGood(keyHash);
    else {
      reason = await stoppedReason(db, keyHash, o.now);
      o.guard.recordBad(keyHash, admission.generation, reason);
    }
  } finally {
    admission.release();
  }
  if (!row) {
    // Looked up and not found (or stopped): the next sighting of this key is refused from memory as known_bad_key.
    refusals.inc({ reason: 'unknown_key' });
    throw errors.unauthorized(reason ?? INVALID_KEY);
  }
  if (row.type !== surface) {
    throw errors.wrongSurface(
      surface === 'public'
        ? 'Internal keys cannot call the public API /v1; create a Public API key'
        : 'Public API keys only work on /v1; use an Internal key or a session here',
    );
  }
  const t = o.now.getTime();
  return {
    actor: {
      orgId: row.organization_id,
      userId: row.created_by_id,
      apiKeyId: row.id,
      keyType: row.type,
      permissions: row.permissions,
      role: row.role,
      plan: row.plan,
      contactBooster: row.contact_booster,
      contactCount: row.contact_count,
    },
    window: row.hits === null ? null : { count: Number(row.hits), resetAt: new Date(t - (t % MINUTE_MS) + MINUTE_MS) },
    dayWindow: row.day_hits === null ? null : { count: Number(row.day_hits), resetAt: new Date(t - (t % DAY_MS) + DAY_MS) },
    sighting: {
      guardKey: `${surface}:${keyHash}`,
      keyHash,
      ownerId: row.created_by_id,
      keyId: row.id,
      orgId: row.organization_id,
      expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
      generation: admission.generation,
    },
  };
}
