import type { Db } from '@leadwire/db';

/**
 * The in-memory half of waking the webhook pumps (webhooks/delivery/wake.ts has the why, and the NOTIFY across
 * processes): writers of work for the pump say so here once it has committed; the pumps of this process (and, in an
 * api process, the notifier) listen. It sits with the outbox, below every resource, since every writer of events
 * calls it.
 */
const wakers = new Set<() => void>();

/** The pumps (and, in an api process, the notifier) of this process. Returns the way to unregister. */
export function onOutboxWritten(wake: () => void): () => void {
  wakers.add(wake);
  return () => wakers.delete(wake);
}

/** Called once what a write queued for the pump (outbox events, manual deliveries) has committed. */
export function outboxWritten(): void {
  for (const w of wakers) w();
}

/** After `db`'s transaction commits (at once outside one): tells the pumps there is work. */
export function announceAfterCommit(db: Db): Promise<void> | void {
  return db.afterCommit(async () => outboxWritten());
}
