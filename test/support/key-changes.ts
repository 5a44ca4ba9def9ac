import { hashKey } from '@leadwire/core';
import type { Runtime } from '../../apps/server/src/compose.ts';

/**
 * Resolves once the server has heard (and its key guard applied) an announcement on the key-change channel that
 * `match` accepts: the positive signal a test waits for instead of sleeping. Call it before making the change.
 */
export function heard(runtime: Runtime, match: (m: Record<string, unknown>) => boolean, timeoutMs = 10_000): Promise<void> {
  const listener = runtime.keyChanges;
  if (!listener) return Promise.reject(new Error('this server does not listen for key changes'));
  return new Promise((resolve, reject) => {
    const onMessage = (payload: string) => {
      let m: unknown;
      try {
        m = JSON.parse(payload);
      } catch {
        return;
      }
      if (typeof m !== 'object' || m === null || !match(m as Record<string, unknown>)) return;
      clearTimeout(timer);
      listener.off('message', onMessage);
      resolve();
    };
    const timer = setTimeout(() => {
      listener.off('message', onMessage);
      reject(new Error(`no matching key change heard within ${timeoutMs} ms`));
    }, timeoutMs);
    listener.on('message', onMessage);
  });
}

/** The announcement of a change to the key `value`: `UPDATE` (revoked, re-dated), `INSERT` (created) or `DELETE`. */
export const aboutKey =
  (value: string, op = 'UPDATE') =>
  (m: Record<string, unknown>) =>
    m.k === hashKey(value) && m.op === op;

/** The announcement of a change to the credentials of user `userId`. */
export const aboutUser = (userId: string) => (m: Record<string, unknown>) => m.u === userId;

/** Resolves once the listener is (again) in the state `listening`. */
export function listenerState(runtime: Runtime, listening: boolean, timeoutMs = 10_000): Promise<void> {
  const listener = runtime.keyChanges;
  if (!listener) return Promise.reject(new Error('this server does not listen for key changes'));
  if (listener.listening === listening) return Promise.resolve();
  const event = listening ? 'up' : 'down';
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      listener.off(event, done);
      reject(new Error(`key-change listener not ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    listener.once(event, done);
  });
}
