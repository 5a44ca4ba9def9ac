import { ChannelListener, KEY_CHANGES_CHANNEL } from '@leadwire/db';
import type { Clock } from '../clock.ts';
import type { Logger } from '../context.ts';
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
 * Keeps the guard told of every key change through a LISTEN connection of its own. The guard answers from memory only
 * while this is listening: it forgets its refusals and stops using memory when the connection drops (changes will be
 * missed), and forgets them again when it is back (some were). The first attempt is waited for, so a server that can
 * reach its database starts with its memory on; if it fails, the server still starts and judges every key in the
 * database until an attempt succeeds.
 */
export async function watchKeyChanges(o: {
  url: string;
  guard: KeyGuard;
  log: Logger;
  retryMs: number;
  clock: Clock;
}): Promise<ChannelListener> {
  const listener = new ChannelListener({
    url: o.url,
    channel: KEY_CHANGES_CHANNEL,
    retryMs: o.retryMs,
    log: o.log,
    applicationName: 'leadwire key changes',
    timers: o.clock,
  });
  listener.on('up', () => o.guard.setLive(true));
  listener.on('down', () => o.guard.setLive(false));
  listener.on('message', (payload) => applyKeyChange(o.guard, payload));
  await listener.start();
  return listener;
}
