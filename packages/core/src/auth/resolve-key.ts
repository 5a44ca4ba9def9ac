import { standingKeyActors } from './standing-keys.ts';
import { type Db, statement } from '@leadwire/db';
import { errors } from '../errors.ts';
import type { KeyGuard, KeySighting, KnownKey } from '../limits/key-guard.ts';
import { refusals } from '../metrics/registry.ts';
import type { Actor } from './actor.ts';
import { INVALID_KEY, malformed, refusalFor, stoppedReason } from './authenticate.ts';
import { bearerToken, hashKey, isWellFormedKey } from './key-material.ts';

/**
 * A Public API key by its hash, if it stands: read once per process and remembered (KeyGuard), counted nowhere. Every
 * request's own statement confirms the key by id and counts it (auth/envelope-sql.ts).
 */
export const LOOKUP_KEY = statement<{ keyHash: string; now: Date }>()((p) => standingKeyActors(p.now).where('k.key_hash', '=', p.keyHash));

/** A /v1 key as the process knows it: who acts, and how the process names it in its memory. */
export interface ResolvedKey {
  actor: Actor;
  sighting: KeySighting;
}

const actorOf = (key: KnownKey): Actor => ({
  orgId: key.orgId,
  userId: key.ownerId,
  apiKeyId: key.keyId,
  keyType: key.type,
  permissions: key.permissions,
  role: key.role,
  plan: key.plan,
  contactBooster: key.contactBooster,
});

/**
 * Resolves `Authorization: Bearer <key>` for /v1 without counting it: from memory when the process knows the key (no
 * round trip), otherwise by one look-up by hash, which the process then remembers. Refusals known from memory (a spent
 * window, a hash not found) are answered as before; a key of the other type is refused with wrong_api_surface, not
 * counted. The database still judges the key on this request: the statement that counts it confirms it by id.
 */
export async function resolvePublicKey(
  db: Db,
  authorization: string | undefined,
  o: { now: Date; guard: KeyGuard; setHeader: (name: string, value: string | number) => void },
): Promise<ResolvedKey> {
  const value = bearerToken(authorization);
  if (!value) {
    refusals.inc({ reason: 'missing_key' });
    throw errors.unauthorized('Missing API key: send Authorization: Bearer <API_KEY>');
  }
  if (!isWellFormedKey(value)) {
    refusals.inc({ reason: 'malformed_key' });
    throw malformed(value, 'public');
  }
  const keyHash = hashKey(value);
  const refusal = refusalFor(o.guard, keyHash, 'public', o.now);
  if (refusal) {
    for (const [name, v] of Object.entries(refusal.headers)) o.setHeader(name, v);
    throw refusal.error;
  }
  let key = o.guard.known(keyHash);
  let generation = o.guard.generation;
  if (!key) {
    const admission = await o.guard.admit(keyHash);
    if (admission.bad) {
      refusals.inc({ reason: 'known_bad_key' });
      throw errors.unauthorized(o.guard.badReason(keyHash) ?? INVALID_KEY);
    }
    generation = admission.generation;
    try {
      const [row] = await db.run(LOOKUP_KEY, { keyHash, now: o.now });
      if (row) {
        key = {
          keyId: row.id,
          orgId: row.organization_id,
          ownerId: row.created_by_id,
          type: row.type,
          permissions: row.permissions,
          expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
          role: row.role,
          plan: row.plan,
          contactBooster: row.contact_booster,
        };
        o.guard.recordGood(keyHash, key, generation);
      } else {
        const reason = await stoppedReason(db, keyHash, o.now);
        o.guard.recordBad(keyHash, generation, reason);
        refusals.inc({ reason: 'unknown_key' });
        throw errors.unauthorized(reason ?? INVALID_KEY);
      }
    } finally {
      admission.release();
    }
  }
  if (key.type !== 'public') throw errors.wrongSurface('Internal keys cannot call the public API /v1; create a Public API key');
  return {
    actor: actorOf(key),
    sighting: {
      guardKey: `public:${keyHash}`,
      keyHash,
      ownerId: key.ownerId,
      // A spent window remembered for this key still counts its 429s in the overview (limits/api-usage.ts).
      keyId: key.keyId,
      orgId: key.orgId,
      expiresAt: key.expiresAt,
      generation,
    },
  };
}

/**
 * The database refused a key the process let through (revoked, expired or stopped since it was remembered): the process
 * forgets it, remembers the refusal like any other, and the request is answered 401 with the reason its holder may know.
 */
export async function refuseKey(db: Db, guard: KeyGuard, sighting: KeySighting, now: Date): Promise<never> {
  guard.forgetKey(sighting.keyHash);
  const reason = await stoppedReason(db, sighting.keyHash, now).catch(() => undefined);
  guard.recordBad(sighting.keyHash, sighting.generation, reason);
  refusals.inc({ reason: 'unknown_key' });
  throw errors.unauthorized(reason ?? INVALID_KEY);
}
