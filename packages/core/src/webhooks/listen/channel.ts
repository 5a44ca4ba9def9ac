import { LISTEN_CHANNEL } from '@leadwire/db';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from '../../context.ts';

/**
 * The process's one LISTEN connection for listen streams, held (out of the pool's rotation) only while streams are
 * open. NOTIFY is delivered after the writing transaction commits and in commit order, so a notification names
 * events that are already visible. A lost connection is reported once through `onLost` (notifications sent meanwhile
 * are gone); the next `open` connects again.
 */
export class NotifyChannel {
  private client: PoolClient | null = null;
  private detach: (() => void) | null = null;
  private connecting: Promise<void> | null = null;
  private readonly pool: Pool;
  private readonly log: Logger;
  private readonly onMessage: (payload: string) => void;
  private readonly onLost: () => void;

  constructor(opts: { pool: Pool; log: Logger; onMessage: (payload: string) => void; onLost: () => void }) {
    this.pool = opts.pool;
    this.log = opts.log;
    this.onMessage = opts.onMessage;
    this.onLost = opts.onLost;
  }

  /** Connects and listens, once; concurrent callers share the attempt. */
  open(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = await this.pool.connect();
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.detach?.();
      // A broken connection may still report errors while it is torn down; unheard, they would crash the process.
      client.on('error', () => undefined);
      this.log.warn({ err }, 'listen: notification connection lost');
      client.release(err instanceof Error ? err : new Error('connection ended'));
      this.onLost();
    };
    const notified = (m: { channel: string; payload?: string }) => {
      if (m.channel === LISTEN_CHANNEL && m.payload) this.onMessage(m.payload);
    };
    const ended = () => lost();
    client.on('notification', notified);
    client.on('error', lost);
    client.on('end', ended);
    const detach = () => {
      client.off('notification', notified);
      client.off('error', lost);
      client.off('end', ended);
    };
    try {
      await client.query(`listen ${LISTEN_CHANNEL}`);
    } catch (err) {
      detach();
      client.release(err instanceof Error ? err : true);
      throw err;
    }
    this.client = client;
    this.detach = detach;
  }

  /** Stops listening and hands the connection back (destroyed if it cannot say UNLISTEN). */
  async close(): Promise<void> {
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    if (!client) return;
    try {
      await client.query(`unlisten ${LISTEN_CHANNEL}`);
      this.detach?.();
      client.release();
    } catch (err) {
      this.detach?.();
      client.on('error', () => undefined);
      client.release(err instanceof Error ? err : true);
    }
  }
}
