import { EventEmitter } from 'node:events';
import pg from 'pg';

export interface ListenerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ChannelListenerOptions {
  url: string;
  /** Plain identifiers: each is written into LISTEN as it is. */
  channels: readonly string[];
  /** Pause before opening the connection again after a loss or a failed attempt. */
  retryMs: number;
  log: ListenerLog;
  /** Shown in pg_stat_activity, so an operator (or a test) can tell this connection from the pool's. */
  applicationName: string;
  /** The clock the retry pause is measured on: the server's, which tests move. */
  timers: RetryTimers;
}

/** What the listener needs of a clock: core's Clock is one. */
export interface RetryTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

type ChannelEvents = { message: [payload: string]; up: []; down: [] };

/**
 * One channel of a listener, as its user sees it: the channel's own notifications, and the connection's state, which
 * every channel of it shares.
 */
export class Channel extends EventEmitter<ChannelEvents> {
  private readonly connection: ChannelListener;

  constructor(connection: ChannelListener) {
    super();
    this.connection = connection;
  }

  get listening(): boolean {
    return this.connection.listening;
  }

  /** The server process behind the connection while listening (tests end it to prove the reconnection). */
  get backendPid(): number | null {
    return this.connection.backendPid;
  }
}

/**
 * One connection of its own (never the pool's: a pooled connection is handed to other work and loses its LISTEN),
 * listening on every channel it was given and opened again, after `retryMs`, whenever it is lost: a process keeps one,
 * however many channels it needs, since each connection is a PostgreSQL backend for good. `up` is emitted on each of its
 * channels once LISTEN is in force on all of them, `down` as soon as the loss is seen;
 * notifications sent while down are gone, which is for the user of a channel to allow for. A channel's `message` is
 * emitted synchronously as each of its notifications arrives, in commit order.
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private pid: number | null = null;
  private timer: unknown = null;
  private attempt: Promise<boolean> | null = null;
  private closed = false;
  /** Failed attempts since the last success: an outage is logged once, not once per retry. */
  private failures = 0;
  private readonly o: ChannelListenerOptions;
  private readonly channels = new Map<string, Channel>();

  constructor(opts: ChannelListenerOptions) {
    if (opts.channels.length === 0) throw new Error('a listener needs at least one channel');
    for (const name of opts.channels) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain channel name: ${name}`);
      this.channels.set(name, new Channel(this));
    }
    this.o = opts;
  }

  /** The view of one of the channels this listener was given. */
  channel(name: string): Channel {
    const channel = this.channels.get(name);
    if (!channel) throw new Error(`this listener does not listen on ${name}`);
    return channel;
  }

  private announce(event: 'up' | 'down'): void {
    for (const channel of this.channels.values()) channel.emit(event);
  }

  get listening(): boolean {
    return this.client !== null;
  }

  /** The server process behind the connection while listening (tests end it to prove the reconnection). */
  get backendPid(): number | null {
    return this.pid;
  }

  /** Makes the first attempt; resolves with whether it is listening. A failure is retried in the background. */
  start(): Promise<boolean> {
    return this.connect();
  }

  private connect(): Promise<boolean> {
    this.attempt ??= this.open().finally(() => (this.attempt = null));
    return this.attempt;
  }

  private async open(): Promise<boolean> {
    if (this.closed || this.client) return this.client !== null;
    const client = new pg.Client({ connectionString: this.o.url, application_name: this.o.applicationName, keepAlive: true });
    let lost = false;
    const onLost = (err?: unknown) => {
      if (lost) return;
      lost = true;
      client.removeAllListeners('notification');
      // A broken connection may still report errors while it is torn down; unheard, they would crash the process.
      client.on('error', () => undefined);
      client.end().catch(() => undefined);
      if (this.client !== client) return;
      this.client = null;
      this.pid = null;
      this.o.log.warn({ err, channels: this.o.channels }, 'listen connection lost');
      this.announce('down');
      this.retry();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (m) => {
      if (m.payload !== undefined) this.channels.get(m.channel)?.emit('message', m.payload);
    });
    try {
      await client.connect();
      await client.query([...this.channels.keys()].map((name) => `listen ${name}`).join('; '));
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      if (lost) throw new Error('connection lost while starting to listen');
      if (this.closed) {
        onLost();
        return false;
      }
      this.client = client;
      this.pid = rows[0]?.pid ?? null;
      this.o.log.info({ channels: this.o.channels, after: this.failures ? `${this.failures} failed attempts` : undefined }, 'listening');
      this.failures = 0;
      this.announce('up');
      return true;
    } catch (err) {
      onLost(err);
      if (!this.closed) {
        if (++this.failures === 1)
          this.o.log.warn({ err, channels: this.o.channels, retryMs: this.o.retryMs }, 'could not listen; trying again until it works');
        this.retry();
      }
      return false;
    }
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = this.o.timers.setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, this.o.retryMs);
  }

  /** Stops listening for good: no further attempt, the connection ended. */
  async close(): Promise<void> {
    this.closed = true;
    this.o.timers.clearTimeout(this.timer);
    this.timer = null;
    await this.attempt?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    this.pid = null;
    if (!client) return;
    client.removeAllListeners();
    client.on('error', () => undefined);
    await client.end().catch(() => undefined);
  }
}
