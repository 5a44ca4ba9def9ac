/**
 * Bounded database time at the executor (PgDb), against a real PostgreSQL whose backends the test freezes with SIGSTOP:
 * a frozen server cannot run its own time-outs, so the client gives up, destroys the connection, and a commit that
 * reaches the server only after that is refused there. Time-outs are a few hundred milliseconds here.
 */
import { DatabaseTimeoutError, DatabaseUnavailableError, PgDb } from '@leadwire/db';
import { commitDeadline, measureClockOffset } from '#db/bounded.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, settingUp, type TestDatabase } from '../support/db.ts';

const QUERY_TIMEOUT_MS = 400;
const TX_TIMEOUT_MS = 700;
const ACQUIRE_TIMEOUT_MS = 300;
const STATEMENT_TIMEOUT_MS = 300;

let database: TestDatabase;
let admin: pg.Client;
const pools: pg.Pool[] = [];
const stopped = new Set<number>();

/**
 * A pool with this file's small time-outs, its first connection open. `clientSide: false` leaves the client's own
 * limits generous, for the tests of the server's limits: on a loaded machine a connection or a BEGIN can take longer
 * than 300 ms, and a client time-out firing first would say nothing about the server's.
 */
async function boundedDb(max = 2, clientSide = true): Promise<PgDb> {
  const pool = new pg.Pool({
    connectionString: database.url,
    max,
    connectionTimeoutMillis: clientSide ? ACQUIRE_TIMEOUT_MS : 10_000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: STATEMENT_TIMEOUT_MS - 100,
    application_name: 'stall-probe',
  });
  pool.on('error', () => {});
  pools.push(pool);
  const db = new PgDb(
    pool,
    clientSide
      ? { queryTimeoutMs: QUERY_TIMEOUT_MS, transactionTimeoutMs: TX_TIMEOUT_MS }
      : { queryTimeoutMs: 10_000, transactionTimeoutMs: 20_000 },
  );
  await settingUp(() => db.raw('select 1 as one'));
  return db;
}

const freeze = (pid: number) => {
  stopped.add(pid);
  process.kill(pid, 'SIGSTOP');
};
const thaw = (pid: number) => {
  process.kill(pid, 'SIGCONT');
  stopped.delete(pid);
};

/** Waits for a backend to be gone (it notices its client left once it runs again): an event, not a pause. */
async function gone(pid: number): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    const { rowCount } = await admin.query('select 1 from pg_stat_activity where pid = $1', [pid]);
    if (rowCount === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`backend ${pid} still there`);
}

async function timed<T>(work: Promise<T>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { ms: performance.now() - started, error };
}

beforeAll(async () => {
  database = await createTestDatabase('stalled');
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query('create table stall_probe (id int primary key)');
});
afterAll(async () => {
  for (const pid of stopped) thaw(pid);
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  await admin?.end();
  await database?.drop();
});

describe('a frozen backend', () => {
  it('is given up on after the query time-out, its connection destroyed; the next statement gets a new one', async () => {
    const db = await boundedDb();
    const [{ pid } = { pid: 0 }] = (await db.raw('select pg_backend_pid() as pid')).rows as { pid: number }[];
    freeze(pid);
    const { ms, error } = await timed(db.raw('select 1 as one'));
    expect(error).toBeInstanceOf(DatabaseTimeoutError);
    expect(ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 20);
    expect(ms).toBeLessThan(QUERY_TIMEOUT_MS + 500);
    // The frozen connection left the pool: the next statement runs on a fresh backend.
    const [next] = (await settingUp(() => db.raw('select pg_backend_pid() as pid'))).rows as { pid: number }[];
    expect(next?.pid).not.toBe(pid);
    thaw(pid);
    await gone(pid);
  });

  it('never commits a transaction whose commit it reads only after the client gave up', async () => {
    const db = await boundedDb();
    let pid = 0;
    const { ms, error } = await timed(
      db.transaction(async (tx) => {
        await tx.raw('insert into stall_probe (id) values (1)');
        [{ pid } = { pid: 0 }] = (await tx.raw('select pg_backend_pid() as pid')).rows as { pid: number }[];
        // Frozen with the insert done: the commit that follows waits in the socket until the backend runs again.
        freeze(pid);
      }),
    );
    expect(error).toBeInstanceOf(DatabaseTimeoutError);
    expect(ms).toBeLessThan(TX_TIMEOUT_MS + 500);
    thaw(pid);
    // Once running, the backend reads the guarded commit, past its budget: refused, and the session's end rolls back.
    await gone(pid);
    expect((await admin.query('select id from stall_probe where id = 1')).rows).toEqual([]);
  });

  it('refuses a transaction that ran past its budget even when the server answers every statement', async () => {
    const db = await boundedDb();
    const { error } = await timed(
      db.transaction(async (tx) => {
        await tx.raw('insert into stall_probe (id) values (2)');
        // Ten short statements past the 700 ms budget together, each far inside the statement and query time-outs
        // (300 and 400 ms): three of 250 ms were cut by statement_timeout instead on a host with a third of the CPU.
        for (let i = 0; i < 10; i++) await tx.raw('select pg_sleep(0.08)');
      }),
    );
    expect(error).toBeInstanceOf(DatabaseTimeoutError);
    expect((await admin.query('select id from stall_probe where id = 2')).rows).toEqual([]);
    // The connection was rolled back, not lost: the pool still works.
    expect((await db.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('server-side limits', () => {
  it('cuts a statement at statement_timeout (57014) and keeps the connection', async () => {
    const db = await boundedDb(1, false);
    const { ms, error } = await timed(db.raw('select pg_sleep(5)'));
    expect((error as { code?: string }).code).toBe('57014');
    expect(ms).toBeLessThan(STATEMENT_TIMEOUT_MS + 300);
    expect((await db.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('cuts a lock wait at lock_timeout (55P03) and rolls the transaction back', async () => {
    const db = await boundedDb(1, false);
    await admin.query('begin');
    await admin.query('lock table stall_probe in access exclusive mode');
    try {
      const { error } = await timed(db.transaction((tx) => tx.raw('insert into stall_probe (id) values (3)')));
      expect((error as { code?: string }).code).toBe('55P03');
    } finally {
      await admin.query('rollback');
    }
    expect((await admin.query('select id from stall_probe where id = 3')).rows).toEqual([]);
  });
});

describe('no connection to be had', () => {
  it('is DatabaseUnavailableError after the acquire time-out when every connection is held', async () => {
    const db = await boundedDb(1);
    let release!: () => void;
    let inside!: () => void;
    const holding = new Promise<void>((r) => (inside = r));
    // The one connection is taken once the transaction's body runs: a positive signal, however slow the machine.
    const held = db.transaction(() => new Promise<void>((r) => ((release = r), inside())));
    await Promise.race([holding, held]);
    const { ms, error } = await timed(db.raw('select 1 as one'));
    release();
    await held;
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(ms).toBeGreaterThanOrEqual(ACQUIRE_TIMEOUT_MS - 20);
    expect(ms).toBeLessThan(ACQUIRE_TIMEOUT_MS + 300);
  });
});

describe("a one-trip write's commit deadline, on the server's clock (commitDeadline)", () => {
  // The server and this process read the same clock here, so the true offset is 0 and a deadline `timeoutMs` from now
  // must not fall later than now + timeoutMs: past it the client has stopped waiting and answered "failed".
  const TIMEOUT_MS = 500;
  const reader = async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    return client;
  };
  /** `client` with each answer held back `delayMs(n)` after it arrives (`n` counts the queries from 0), and the count. */
  const delayed = (client: pg.Client, delayMs: (n: number) => number) => {
    const answers = {
      calls: 0,
      query: async (text: string) => {
        const n = answers.calls++;
        const result = await client.query(text);
        await new Promise((r) => setTimeout(r, delayMs(n)));
        return result;
      },
    };
    return answers;
  };

  it('never falls after the moment the client stops waiting, even when the server read its clock late in the round trip', async () => {
    const client = await reader();
    try {
      // The server reads its clock 200 ms after the question left: a midpoint estimate put it 100 ms ahead.
      await measureClockOffset(client, 'select pg_sleep(0.2); ');
      const before = Date.now();
      const deadline = commitDeadline(client, TIMEOUT_MS)!.getTime();
      expect(deadline).toBeLessThanOrEqual(Date.now() + TIMEOUT_MS);
      expect(deadline).toBeGreaterThan(before);
    } finally {
      await client.end();
    }
  });

  it('reads the clock again when an answer was slow to arrive, so a busy moment does not make it early for good', async () => {
    const client = await reader();
    // The first answer reaches us a second after the server read its clock; the readings after it arrive as they come.
    const slowFirst = delayed(client, (n) => (n === 0 ? 1_000 : 0));
    try {
      await measureClockOffset(slowFirst, 'select 1; ');
      const now = Date.now();
      const deadline = commitDeadline(slowFirst, TIMEOUT_MS)!.getTime();
      expect(slowFirst.calls).toBeGreaterThan(1);
      expect(deadline).toBeLessThanOrEqual(now + TIMEOUT_MS);
      // From the slow reading alone it would be a second early: already past.
      expect(deadline).toBeGreaterThan(now);
    } finally {
      await client.end();
    }
  });

  it('reads a database whose every answer is slow (one far away) once more, not twice: nothing better is to be had', async () => {
    const client = await reader();
    const far = delayed(client, () => 300);
    try {
      await measureClockOffset(far, 'select 1; ');
      expect(far.calls).toBe(2);
      expect(commitDeadline(far, TIMEOUT_MS)!.getTime()).toBeLessThanOrEqual(Date.now() + TIMEOUT_MS);
    } finally {
      await client.end();
    }
  });
});
