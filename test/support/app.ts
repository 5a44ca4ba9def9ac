import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '@leadwire/core';
import { TestClock } from '#core/clock.ts';
import { TestRandom } from '#core/random.ts';
import { bootstrap, createApiKey, type NewApiKey } from '#core/accounts/service.ts';
import { setPasswordHashCost } from '#core/accounts/passwords.ts';
import type { FastifyInstance } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { buildApp } from '../../apps/server/src/app.ts';
import { compose, type Runtime } from '../../apps/server/src/compose.ts';
import type { Resolver } from '#core/webhooks/transport/resolver.ts';
import { requestIdMixin } from '#core/http/request-scope.ts';
import { createTestDatabase } from './db.ts';

export interface TestApp {
  /** Origin, e.g. http://127.0.0.1:1234 */
  origin: string;
  /** The public API root: origin + /api/v1 */
  v1: string;
  app: FastifyInstance;
  runtime: Runtime;
  /** The server's clock: tests move it instead of waiting for time to pass. */
  clock: TestClock;
  /** The server's source of chance (retry jitter): tests fix or queue its draws. */
  random: TestRandom;
  newOrg(opts?: { plan?: 'starter' | 'pro' | 'max' }): Promise<{ orgId: string; userId: string; publicKey: string; internalKey: string }>;
  newKey(input: NewApiKey): Promise<string>;
  /** Raw SQL on the test database (assertions and set-up). */
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

let orgSeq = 0;

/**
 * The request path's database time-outs, raised for tests: on a shared two-core machine, ten concurrent writes queued
 * on one lock can legitimately wait longer than production's few seconds. Tests of the time-outs set their own.
 */
const GENEROUS_DB_LIMITS = {
  DB_ACQUIRE_TIMEOUT_MS: '30000',
  DB_STATEMENT_TIMEOUT_MS: '30000',
  DB_LOCK_TIMEOUT_MS: '30000',
  DB_QUERY_TIMEOUT_MS: '30000',
  DB_TRANSACTION_TIMEOUT_MS: '60000',
};

/** Composes and listens on a random local port: the one way tests start a server in-process. */
export async function serve(
  config: Config,
  opts: {
    clock: TestClock;
    random?: TestRandom;
    migrate?: boolean;
    resolver?: Resolver;
    logStream?: DestinationStream;
    /** Where the process's own logger (`deps.log`: workers, services) writes, at LOG_LEVEL, as main.ts sets it up. */
    runtimeLogStream?: DestinationStream;
  },
): Promise<{ runtime: Runtime; app: FastifyInstance; origin: string }> {
  const log = opts.runtimeLogStream
    ? pino({ level: config.LOG_LEVEL, mixin: requestIdMixin }, opts.runtimeLogStream)
    : pino({ level: 'silent' });
  const runtime = await compose(config, log, opts);
  // Silent unless a test reads the server's log lines (LOG_LEVEL decides what it gets).
  const app = await buildApp(runtime.deps, opts.logStream ? { logStream: opts.logStream } : { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return { runtime, app, origin: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** scrypt's N = 2^4: 0.05 ms of CPU a hash, where the floor's 2^12 takes about 8 ms. */
const TEST_HASH_COST = 4;

/**
 * A real server on a random port over its own database, cloned from the run's migrated template: the server's own
 * migration step then finds nothing pending.
 */
export async function initTestApp(
  env: Record<string, string> = {},
  opts: { resolver?: Resolver; logStream?: DestinationStream; runtimeLogStream?: DestinationStream } = {},
): Promise<TestApp> {
  const db = await createTestDatabase(undefined, { migrated: true });
  // Files a test stores (uploads, purges) live in a folder of its own, never in the checkout's .data.
  const dataDir = await mkdtemp(join(tmpdir(), 'leadwire-test-data-'));
  // Tests sign up and ask for resets from one loopback address far more often than a person would; the address
  // budgets have their own tests, which set them low.
  const config = loadConfig({
    DATABASE_URL: db.url,
    LOG_LEVEL: 'silent',
    PASSWORD_HASH_COST: '12',
    SIGNUP_PER_ADDRESS_PER_HOUR: '100000',
    PASSWORD_RESET_PER_ADDRESS_PER_HOUR: '100000',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...GENEROUS_DB_LIMITS,
    // Tests refuse many /v1 requests from 127.0.0.1 on purpose (fuzzing, rate limits); the pacing has its own test.
    V1_REFUSAL_DELAY_MS: '0',
    ...env,
  });
  const clock = new TestClock();
  const random = new TestRandom();
  const { runtime, app, origin } = await serve(config, { clock, random, ...opts });
  // Hashing is not what these tests are about: at the configuration's floor (12, a guard for operators) hashing the
  // owners' and members' passwords took some 4 % of `test:quick`'s CPU. Below it, as Devise's test `stretches` and
  // Django's test hashers are, unless a test gives PASSWORD_HASH_COST (the hashing tests set the cost they are about
  // themselves). The hashes are real scrypt and carry their cost, which is what a check reads.
  if (env.PASSWORD_HASH_COST === undefined) setPasswordHashCost(TEST_HASH_COST);
  return {
    origin,
    v1: `${origin}/api/v1`,
    app,
    runtime,
    clock,
    random,
    newOrg: async (opts = {}) =>
      bootstrap(runtime.deps.db, {
        name: `Org ${++orgSeq}`,
        ownerEmail: `owner${orgSeq}-${Math.random().toString(36).slice(2)}@example.com`,
        ownerPassword: 'correct horse battery staple',
        ...(opts.plan ? { plan: opts.plan } : {}),
      }),
    newKey: async (input) => (await createApiKey(runtime.deps.db, input)).value,
    // Unprepared (raw), so assertions may read whole rows with `select *`, which the executor refuses for the app.
    sql: async <T>(query: string, params: unknown[] = []) => {
      let n = 0;
      return (
        await runtime.deps.db.raw(
          query.replace(/\?/g, () => `$${++n}`),
          params,
        )
      ).rows as T[];
    },
    close: async () => {
      await app.close();
      await runtime.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** fetch() against the public API with a key; JSON in, JSON out. */
export async function call(
  t: TestApp,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${t.v1}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
  });
  return answerOf(res);
}

/**
 * A response as tests read it: the body parsed as JSON, or left as text (HTML, empty, or a failure the test shows).
 * An error body's `requestId` (issue 19) is checked here, for every test, to be the response's `x-request-id`, and then
 * taken out so that tests compare the rest of the body; `keepRequestId` leaves it for the tests of request ids.
 */
export async function answerOf(
  res: Response,
  opts: { keepRequestId?: boolean } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text, so an assertion can show it
  }
  return {
    status: res.status,
    body: opts.keepRequestId ? body : withoutRequestId(res.status, body, res.headers.get('x-request-id')),
    headers: res.headers,
  };
}

/** An error body without its `requestId`, once it is checked to be the response's `x-request-id` (see answerOf). */
export function withoutRequestId(status: number, body: any, header: string | string[] | null | undefined): any {
  if (status < 400 || !body || typeof body !== 'object' || !('requestId' in body)) return body;
  const { requestId, ...rest } = body;
  if (requestId !== header)
    throw new Error(`error body's requestId ${JSON.stringify(requestId)} is not its x-request-id ${JSON.stringify(header)}`);
  return rest;
}
