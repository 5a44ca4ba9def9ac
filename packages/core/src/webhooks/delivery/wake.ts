import { AsyncLocalStorage } from 'node:async_hooks';
import type { Channel, Db } from '@leadwire/db';
import { onOutboxWritten } from '../../events/written.ts';
import type { Logger } from '../../context.ts';

/**
 * What wakes the webhook pumps (pump.ts) when work arrives, so that none has to poll (issue 27, docs/operating.md,
 * "An idle server").
 *
 * Why not a NOTIFY from the outbox trigger, which would catch every event wherever it is written: PostgreSQL takes one
 * lock for all of a database's notifying transactions at commit and holds it through the commit's WAL flush, so
 * notifying commits cannot share a flush. Measured on this machine (pgbench, 16 clients, an insert per transaction,
 * fsync on): 5,208-5,363 transactions/s without, 1,287-2,342 with a pg_notify in each. The hot write path would pay
 * that for every event of an organization with an endpoint. So the writer says so after its commit instead, in memory:
 *  - a pump in the same process (ROLE=all, or worker-side writes) is woken at once, at no cost to the database;
 *  - a process without a pump (ROLE=api) sends one NOTIFY on PUMP_WAKE_CHANNEL, at most once per NOTIFY_GAP_MS,
 *    in a transaction of its own after the writes it announces committed; the worker processes LISTEN on it.
 * A write nobody announces (a code path that forgot to) is still picked up by the pump's backstop poll.
 */
/** The channel the api processes wake the worker processes' pumps on (its payload is empty). */
export const PUMP_WAKE_CHANNEL = 'leadwire_pump_wake';

/**
 * The wake's reach across processes: NOTIFYs coalesce within this gap, so a process under load sends at most ~20 a
 * second (each a small transaction of its own, never part of a request's), and an idle one none.
 */
export const NOTIFY_GAP_MS = 50;

/** In a process without a pump: forwards the wakes to the worker processes, coalesced. */
export function notifyWorkers(db: Db, log: Logger): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | null = null;
  let last = 0;
  let sending: Promise<unknown> | null = null;
  const send = () => {
    timer = null;
    last = performance.now();
    sending = db
      .raw(`select pg_notify('${PUMP_WAKE_CHANNEL}', '')`)
      .catch((err: unknown) => log.warn({ err }, 'could not wake the webhook workers; their backstop poll will'))
      .finally(() => (sending = null));
  };
  // The NOTIFY is part of no request (a wake comes from inside one): its timer is set in the context of the caller.
  const detached = AsyncLocalStorage.snapshot();
  const off = onOutboxWritten(() => {
    if (timer) return;
    timer = detached(() => setTimeout(send, Math.max(0, last + NOTIFY_GAP_MS - performance.now())));
  });
  return {
    async stop() {
      off();
      if (timer) {
        clearTimeout(timer);
        send();
      }
      await sending;
    },
  };
}

/**
 * In a process with a pump: wakes it on every NOTIFY from the other processes (`PUMP_WAKE_CHANNEL` on the process's
 * LISTEN connection), and when the connection is back after a loss (a wake may have been missed while it was down).
 */
export function listenForWork(channel: Channel, wake: () => void): Channel {
  let wasUp = false;
  channel.on('up', () => {
    if (wasUp) wake();
    wasUp = true;
  });
  channel.on('message', () => wake());
  return channel;
}
