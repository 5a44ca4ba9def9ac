import type { Db, MikroORM, PgDb, ReplicaSet } from '@leadwire/db';
import type { z } from 'zod';
import type { Clock } from './clock.ts';
import type { Random } from './random.ts';
import type { Config } from './config.ts';

/*
 * The context is the floor every service stands on, so it imports nothing above clock, config and random: the
 * dependencies it gathers that are implemented higher up (the queue, the resolver, the logger) are declared here, as
 * the shape the domain needs, and their implementations (jobs/boss.ts, webhooks/transport/resolver.ts, pino) fit it.
 */

/** Minimal structured logger: pino's shape, so Fastify's logger fits without this package depending on it. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export interface SendOptions {
  startAfter?: Date | number;
}

/**
 * A queue with the payload its jobs carry. Each job module exports its own (svix's QueueTask habit): a send names a
 * queue by this object, never by a string, so it cannot name a queue that does not exist nor carry another's payload.
 */
export interface JobQueue<S extends z.ZodType<object, object> = z.ZodType<object, object>> {
  /** The pg-boss queue name. */
  readonly name: string;
  /** The payload's schema; the worker parses each job's data with it. */
  readonly payload: S;
  /** Reads a job's data as the worker receives it. */
  parse(this: void, data: unknown): z.output<S>;
  /** Queues one job on the caller's handle (see `Jobs.send`). */
  send(this: void, jobs: Jobs, db: Db, data: z.input<S>, options?: SendOptions): Promise<void>;
  /** Queues many jobs of this queue in one statement on the caller's handle. */
  sendMany(this: void, jobs: Jobs, db: Db, data: readonly z.input<S>[]): Promise<void>;
}

/**
 * The job queue as the domain sees it. `send` takes the caller's database handle (a transaction, or the ORM's entity manager) so
 * that a job enqueued inside a transaction exists exactly when that transaction commits.
 */
export interface Jobs {
  send<S extends z.ZodType<object, object>>(db: Db, queue: JobQueue<S>, data: NoInfer<z.input<S>>, options?: SendOptions): Promise<void>;
  /** Many jobs of one queue in one statement, on the caller's handle like `send`. */
  sendMany<S extends z.ZodType<object, object>>(db: Db, queue: JobQueue<S>, data: readonly NoInfer<z.input<S>>[]): Promise<void>;
  /**
   * Has this process's workers of `queue`, if it runs any, fetch now: for jobs the caller committed a moment ago, which
   * the NOTIFY of their commit reaches only while the queue's LISTEN connection is up (after PostgreSQL was away,
   * pg-boss tries it again after 1, 2, 4, 8, 16, then every 30 s).
   */
  wake(queue: JobQueue): void;
}

/**
 * Turns a receiver's host name into the addresses to check and connect to. A dependency so that tests can answer
 * differently on each call (DNS rebinding) without a DNS server; production uses the system resolver.
 */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Long-lived dependencies built once at boot and shared by every request and job. */
export interface Deps {
  orm: MikroORM;
  /** The one way to the database (prepared statements on the ORM's pool); the ORM itself keeps schema and migrations. */
  db: PgDb;
  /** Read replicas (DATABASE_REPLICA_URLS) for the replica-safe reads; null: every read on `db`. */
  replicas: ReplicaSet | null;
  config: Config;
  jobs: Jobs;
  log: Logger;
  /** The one source of the current time; tests pass a TestClock. */
  clock: Clock;
  /** The one source of chance (retry jitter); tests pass a TestRandom. */
  random: Random;
  /** Resolves webhook receivers' host names; tests replace it to answer differently each time. */
  resolver: Resolver;
  /** True when a score adjuster is configured: changed score inputs then queue the adjustment job. */
  scoreAdjustment: boolean;
}

/**
 * What a procedure sees of the request. Transport details are reduced to header access so routers stay testable and
 * services never see HTTP types.
 */
export interface RequestContext {
  deps: Deps;
  /** Where this request's statements run: the pool, or a transaction a middleware opened around the procedure. */
  db: Db;
  requestId: string;
  /** The queue as this request sees it: the jobs it queues carry its id (`deps.jobs` is the process's, without one). */
  jobs: Jobs;
  log: Logger;
  header(name: string): string | undefined;
  setHeader(name: string, value: string | number): void;
  /** Method and path of the REST call, for idempotency fingerprints; undefined on typed RPC. */
  route?: { method: string; path: string };
  /** The client's address as the socket (or a configured trusted proxy) gives it; keys the sign-in throttle. */
  ip?: string;
  /**
   * Typed RPC only, when the request opts in with `x-leadwire-session: cookie`: a new session is handed to the browser
   * as cookies rather than in the body (apps/server/src/http/browser-session.ts), and signing out clears them.
   */
  browserSession?: BrowserSession;
  /** Typed RPC only, when the request carries a session cookie: reads it (checking CSRF) for the internal procedures. */
  sessionCookie?: SessionCookie;
}

export interface BrowserSession {
  open(session: { token: string; expiresAt: string }): void;
  close(): void;
}

export interface SessionCookie {
  /** The cookie's session token once the request proves it came from the console (`csrf_failed` otherwise). */
  token(): string;
  /** The session behind the cookie is over: the answer also clears the cookies. */
  ended(): void;
}
