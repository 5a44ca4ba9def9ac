import { randomUUID } from 'node:crypto';
import type { InternalActor } from '../../auth/actor.ts';
import type { ClockTimer } from '../../clock.ts';
import type { Deps } from '../../context.ts';
import { errors } from '../../errors.ts';
import { newSigningSecret } from '../transport/secret.ts';
import { NotifyChannel } from './channel.ts';
import { deliveryFrame, frame, HEARTBEAT, type ListenEvent, readyFrame } from './frames.ts';
import * as SQL from './sql.ts';
import { withRequestId } from '../../http/request-scope.ts';

/** Where a stream's frames go: the HTTP response, reduced to what the hub needs. */
export interface ListenSink {
  write(chunk: string): void;
  /** Bytes written but not yet sent. */
  buffered(): number;
  end(): void;
}

export type EndReason = 'server_shutdown' | 'interrupted' | 'too_slow';

interface Session {
  orgId: string;
  events: ReadonlySet<string> | null;
  secret: string;
  sink: ListenSink;
  /** Until the ready event is out, deliveries wait here, so the secret is always the first thing a client reads. */
  pending: ListenEvent[] | null;
}

/** A client that stops reading is cut off rather than allowed to fill the server's memory. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** A listener row outlives a crashed process by this much; live processes refresh theirs far more often. */
const LISTENER_TTL_MS = 5 * 60_000;
export const REFRESH_MS = 60_000;
/** What a reconnecting client can get back (Last-Event-ID) from the process it was streaming from. */
const RESUME_KEEP = 500;
const RESUME_WINDOW_MS = 10 * 60_000;
/**
 * After its last stream ends an organization stays listened to (row, channel, kept events) this long, so a client
 * whose connection dropped can reconnect and resume without a gap.
 */
export const LINGER_MS = 30_000;

interface Org {
  sessions: Set<Session>;
  linger: ClockTimer | null;
}

/** The person's listen secret (created on first use), the same for every key and session of theirs. */
export async function listenSecret(deps: Pick<Deps, 'db'>, actor: Pick<InternalActor, 'orgId' | 'userId'>): Promise<string> {
  const [row] = await deps.db.run(SQL.LISTEN_SECRET, { orgId: actor.orgId, userId: actor.userId, secret: newSigningSecret() });
  if (!row) throw new Error('listen secret not stored');
  return row.secret;
}

/**
 * The listen streams of one server process. One LISTEN connection serves them all: the outbox trigger notifies the
 * ids of new events of organizations someone listens to, and the hub reads each notified batch once (one query by
 * primary key) and writes it to every stream of that organization, signed with each stream's secret. Listener rows,
 * the channel and their teardown go through one queue, so a stream opening while the last one closes cannot lose
 * its row or its connection.
 */
export class ListenHub {
  private readonly deps: Deps;
  private readonly processKey = randomUUID();
  private readonly byOrg = new Map<string, Org>();
  private readonly recent = new Map<string, { e: ListenEvent; at: number }[]>();
  private readonly channel: NotifyChannel;
  private notifications: Promise<void> = Promise.resolve();
  private rows: Promise<unknown> = Promise.resolve();
  private heartbeat: ClockTimer | null = null;
  private refresh: ClockTimer | null = null;
  private closed = false;

  constructor(deps: Deps) {
    this.deps = deps;
    this.channel = new NotifyChannel({
      pool: deps.db.pool,
      log: deps.log,
      onMessage: (payload) => {
        this.notifications = this.notifications
          .then(() => this.handle(payload))
          .catch((err: unknown) => deps.log.warn({ err }, 'listen: notification not handled'));
      },
      onLost: () => {
        // Events notified while the connection was down are gone: clients reconnect, and must not be told they resumed.
        this.recent.clear();
        for (const s of this.all()) this.end(s, 'interrupted');
      },
    });
  }

  get sessionCount(): number {
    let n = 0;
    for (const org of this.byOrg.values()) n += org.sessions.size;
    return n;
  }

  private all(): Session[] {
    return [...this.byOrg.values()].flatMap((org) => [...org.sessions]);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    // The hub serves every stream of the process: its work (and the channel it opens) is no one request's, even when
    // a request's stream set it going, so its log lines carry no stale reqId (http/request-scope.ts).
    const run = withRequestId(undefined, () => this.rows.then(fn));
    this.rows = run.catch(() => undefined);
    return run;
  }

  /**
   * Opens a stream for the actor's organization: its secret, the listener row and the channel first, then the ready
   * event, then whatever `lastEventId` asks to be replayed, then live deliveries.
   */
  async open(
    actor: InternalActor,
    opts: { events: readonly string[] | null; lastEventId?: string },
    sink: ListenSink,
  ): Promise<{ close(): void }> {
    if (this.closed) throw errors.serviceUnavailable('The server is shutting down; retry shortly', 1);
    const secret = await listenSecret(this.deps, actor);
    const session: Session = { orgId: actor.orgId, events: opts.events ? new Set(opts.events) : null, secret, sink, pending: [] };
    let org = this.byOrg.get(actor.orgId);
    if (!org) this.byOrg.set(actor.orgId, (org = { sessions: new Set(), linger: null }));
    this.deps.clock.clearTimeout(org.linger);
    org.linger = null;
    org.sessions.add(session);
    try {
      await this.serial(async () => {
        await this.channel.open();
        await this.deps.db.run(SQL.DELETE_EXPIRED_LISTENERS, { now: this.deps.clock.now() });
        await this.deps.db.run(SQL.UPSERT_LISTENER, { orgId: actor.orgId, processKey: this.processKey, expiresAt: this.expiry() });
      });
    } catch (err) {
      this.close(session);
      throw err;
    }
    this.startTimers();
    let replay: ListenEvent[] = [];
    let resumed: boolean | null = null;
    if (opts.lastEventId) {
      const kept = this.recent.get(actor.orgId) ?? [];
      const at = kept.findIndex((r) => r.e.id === opts.lastEventId);
      resumed = at >= 0;
      replay = kept.slice(at + 1).map((r) => r.e);
      if (!resumed) replay = [];
    }
    sink.write(readyFrame({ secret, events: opts.events, resumed }));
    const waiting = session.pending ?? [];
    session.pending = null;
    const replayed = new Set(replay.map((e) => e.id));
    for (const e of [...replay, ...waiting.filter((e) => !replayed.has(e.id))]) this.send(session, e);
    return { close: () => this.close(session) };
  }

  private expiry(): Date {
    return new Date(this.deps.clock.now().getTime() + LISTENER_TTL_MS);
  }

  /** Heartbeats and the listener rows' refresh, on deps.clock: each beat sets the next, so a test moves through them. */
  private startTimers(): void {
    const { clock } = this.deps;
    const beat = () => {
      this.heartbeat = clock.setTimeout(beat, this.deps.config.WEBHOOK_LISTEN_HEARTBEAT_MS);
      for (const s of this.all()) if (!s.pending) this.write(s, HEARTBEAT);
    };
    const refresh = () => {
      this.refresh = clock.setTimeout(refresh, REFRESH_MS);
      this.serial(() => this.deps.db.run(SQL.REFRESH_LISTENERS, { expiresAt: this.expiry(), processKey: this.processKey })).catch(
        (err: unknown) => this.deps.log.warn({ err }, 'listen: listener refresh failed'),
      );
    };
    withRequestId(undefined, () => {
      this.heartbeat ??= clock.setTimeout(beat, this.deps.config.WEBHOOK_LISTEN_HEARTBEAT_MS);
      this.refresh ??= clock.setTimeout(refresh, REFRESH_MS);
    });
  }

  private stopTimers(): void {
    this.deps.clock.clearTimeout(this.heartbeat);
    this.deps.clock.clearTimeout(this.refresh);
    this.heartbeat = this.refresh = null;
  }

  /**
   * Ends a stream's bookkeeping (the client left, or the hub ended it). The last one of its organization leaves the
   * organization lingering, then drops its row, its kept events and, with nothing else listened to, the channel.
   */
  private close(session: Session): void {
    const org = this.byOrg.get(session.orgId);
    if (!org?.sessions.delete(session) || org.sessions.size > 0) return;
    if (this.closed) return this.forget(session.orgId);
    org.linger = this.deps.clock.setTimeout(() => this.forget(session.orgId), LINGER_MS);
  }

  private forget(orgId: string): void {
    const org = this.byOrg.get(orgId);
    if (!org || org.sessions.size > 0) return;
    this.deps.clock.clearTimeout(org.linger);
    this.byOrg.delete(orgId);
    this.recent.delete(orgId);
    if (this.byOrg.size === 0) this.stopTimers();
    this.serial(async () => {
      if (this.byOrg.has(orgId)) return;
      await this.deps.db.run(SQL.DELETE_LISTENER, { orgId, processKey: this.processKey });
      if (this.byOrg.size === 0) await this.channel.close();
    }).catch((err: unknown) => this.deps.log.warn({ err }, 'listen: listener row not removed'));
  }

  private end(session: Session, reason: EndReason): void {
    this.write(session, frame('end', { reason }));
    session.sink.end();
    this.close(session);
  }

  private write(session: Session, chunk: string): void {
    session.sink.write(chunk);
    if (session.sink.buffered() > MAX_BUFFERED_BYTES) this.end(session, 'too_slow');
  }

  private send(session: Session, e: ListenEvent): void {
    if (session.events && !session.events.has(e.event)) return;
    if (session.pending) session.pending.push(e);
    else this.write(session, deliveryFrame(e, session.secret, this.deps.clock.now()));
  }

  private remember(orgId: string, e: ListenEvent): void {
    const now = this.deps.clock.now().getTime();
    const kept = (this.recent.get(orgId) ?? []).filter((r) => now - r.at <= RESUME_WINDOW_MS).slice(-(RESUME_KEEP - 1));
    kept.push({ e, at: now });
    this.recent.set(orgId, kept);
  }

  /** `{ o, ids }` from the outbox trigger, or `{ o, x }` (an example from the trigger route, carried whole). */
  private async handle(payload: string): Promise<void> {
    const msg = JSON.parse(payload) as { o: string; ids?: string[]; x?: ListenEvent };
    if (!this.byOrg.has(msg.o)) return;
    const events = msg.x ? [msg.x] : await this.deps.db.run(SQL.EVENTS_BY_ID, { ids: msg.ids ?? [], orgId: msg.o });
    for (const e of events) {
      const item: ListenEvent = { id: e.id, event: e.event, payload: e.payload };
      this.remember(msg.o, item);
      for (const s of this.byOrg.get(msg.o)?.sessions ?? []) this.send(s, item);
    }
  }

  /** Server shutdown: every stream gets `end` and is closed, then the rows and the connection go. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const s of this.all()) this.end(s, 'server_shutdown');
    for (const org of this.byOrg.values()) this.deps.clock.clearTimeout(org.linger);
    this.byOrg.clear();
    this.stopTimers();
    await this.serial(async () => {
      await this.deps.db.run(SQL.DELETE_PROCESS_LISTENERS, { processKey: this.processKey });
      await this.channel.close();
    }).catch((err: unknown) => this.deps.log.warn({ err }, 'listen: shutdown cleanup failed'));
  }
}

const hubs = new WeakMap<Deps, ListenHub>();

/** The one hub of a running app (keyed by its Deps, so two apps in one test process behave as two processes). */
export function listenHubOf(deps: Deps): ListenHub {
  let hub = hubs.get(deps);
  if (!hub) hubs.set(deps, (hub = new ListenHub(deps)));
  return hub;
}

/** The hub if one was ever started: shutdown must not create one (and a LISTEN connection) only to close it. */
export const existingListenHub = (deps: Deps): ListenHub | undefined => hubs.get(deps);
