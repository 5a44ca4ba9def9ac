import type { Channel } from '@leadwire/db';
import type { KeyGuard } from '../limits/key-guard.ts';

/**
 * Applies one announcement to the guard: `{"k": hash, "op": ...}` for a key created, revoked, re-dated or deleted; `{"u": id,
 * "r": reactivated}` for a user whose credentials changed. Anything else (an operator's hand-made NOTIFY) is a change
 * the process cannot place, so it forgets every refusal: the safe side, at the cost of a look-up per remembered key.
 */
export function applyKeyChange(guard: KeyGuard, payload: string): void {
  let m: unknown;
  try {
    m = JSON.parse(payload);
  } catch {
    m = null;
  }
  if (typeof m === 'object' && m !== null) {
    const { k, u, r } = m as Record<string, unknown>;
    if (typeof k === 'string') return guard.keyChanged(k);
    if (typeof u === 'string') return guard.ownerChanged(u, r === true);
  }
  guard.forgetRefusals();
}

/**
 * Keeps the guard told of every key change heard on the process's LISTEN connection (`KEY_CHANGES_CHANNEL`). The guard
 * answers from memory only while it is listening: it forgets its refusals and stops using memory when the connection
 * drops (changes will be missed), and forgets them again when it is back (some were). Attach before the connection's
 * first attempt, which the process waits for, so a server that can reach its database starts with its memory on; if
 * it fails, the server still starts and judges every key in the database until an attempt succeeds.
 */
export function watchKeyChanges(channel: Channel, guard: KeyGuard): Channel {
  channel.on('up', () => guard.setLive(true));
  channel.on('down', () => guard.setLive(false));
  channel.on('message', (payload) => applyKeyChange(guard, payload));
  return channel;
}
