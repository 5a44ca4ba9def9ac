/**
 * The edge phase: a well-behaved tenant's latency idle and beside each abuse of the HTTP edge in turn, on a server of
 * its own (started with TRUST_PROXY naming the bench's proxy address unless the environment sets it).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@leadwire/core';
import pg from 'pg';
import { cpuMeter, postmasterPid } from './cpu.ts';
import { postJson } from './edge-abuse.ts';
import { ADDR, type StepContext, type StepResult, STEPS, type Tenant } from './edge-steps.ts';
import { probe } from './probe.ts';
import { startServer } from './server.ts';
import { clusterUrl, createBenchOrg, seedContacts } from './setup.ts';
import { seedEmail } from './workload.ts';

export interface EdgeSettings {
  /** Measured window of each step. */
  seconds: number;
  /** Requests in flight in the sign-up and sign-in floods. */
  floodConnections: number;
  /** autocannon connections of the unknown-key flood and the spent key. */
  loadConnections: number;
  /** Slow connections to hold; null means the server's HTTP_MAX_CONNECTIONS. */
  slowSockets: number | null;
  /** Steps to run (empty: all). */
  only: string[];
}

export const EDGE_STEPS = STEPS.map((s) => s.name);

/** The longest wait for the server to finish what the previous step left queued. */
const SETTLE_MAX_MS = 45_000;

/** The tenant: 6 keys at 8 upserts a second each (480 a minute, under the 600 limit), and one user signing in every 2 s. */
const TENANT = { keys: 6, upsertsPerSec: 48, idempotencyEvery: 4, signInsPerSec: 0.5, seeds: 5_000 };

export interface EdgeResult {
  settings: EdgeSettings & { slowSockets: number };
  server: { trustProxy: string; maxConnections: number; passwordHashCost: number; poolMax: number; extra: Record<string, string> };
  tenant: typeof TENANT & { from: string };
  idle: Tenant;
  idleAfter: Tenant | null;
  steps: StepResult[];
}

/** Server settings the lead may pass to try the edge's defences; printed so a run says what it measured. */
const SHOWN = /^(HTTP_|TRUST_PROXY$|PASSWORD_HASH_|DB_POOL_MAX$|SIGN_?UP_|SIGN_?IN_|ADDRESS_)/;
const SECRET = /SECRET|TOKEN|API_KEY|URL|PASS(WORD)?$/;

function rssMb(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

export async function runEdge(S: EdgeSettings, log: (msg: string) => void): Promise<EdgeResult> {
  for (const name of S.only)
    if (!EDGE_STEPS.includes(name)) throw new Error(`BENCH_EDGE_ONLY: unknown step ${name} (steps: ${EDGE_STEPS.join(', ')})`);
  const steps = STEPS.filter((s) => S.only.length === 0 || S.only.includes(s.name));
  log('edge: starting its own server ...');
  const server = await startServer(process.env.TRUST_PROXY === undefined ? { TRUST_PROXY: ADDR.proxy } : {});
  const onSignal = () => void server.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let pool: pg.Pool | undefined;
  try {
    const config = loadConfig(server.env);
    const url = await clusterUrl(server.dataDir);
    pool = new pg.Pool({ connectionString: url, max: 2 });
    const org = await createBenchOrg(url, TENANT.keys + 1);
    await seedContacts(pool, org.orgId, TENANT.seeds);
    // Two real accounts, signed up over HTTP from the tenant's address: the tenant's user and the sign-in flood's victim.
    const password = randomBytes(18).toString('base64url');
    const accounts = { tenant: `tenant-${Date.now()}@edge.example.com`, victim: `victim-${Date.now()}@edge.example.com` };
    for (const email of Object.values(accounts)) {
      const r = await postJson(server.origin, '/api/accounts/sign-up', { organizationName: 'Edge tenant', email, password }, ADDR.tenant);
      if (r.status !== 201) throw new Error(`sign-up of the bench's account answered ${r.status}: ${r.body.slice(0, 200)}`);
    }

    const keys = org.keys.slice(0, TENANT.keys);
    const upserts = Array.from({ length: 64 }, (_, i) => ({
      headers: { authorization: `Bearer ${keys[i % keys.length]!}` },
      body: JSON.stringify({
        email: seedEmail(Math.floor(Math.random() * TENANT.seeds)),
        firstName: 'Ada',
        tags: ['tenant'],
        custom: { n: String(i) },
      }),
    }));
    const durationMs = S.seconds * 1000;
    const common = { origin: server.origin, durationMs, localAddress: ADDR.tenant, freshConnections: true };
    const runTenant = async (): Promise<Tenant> => {
      const [u, s] = await Promise.all([
        probe({
          ...common,
          path: '/api/v1/contacts/upsert',
          requests: upserts,
          perSec: TENANT.upsertsPerSec,
          idempotencyEvery: TENANT.idempotencyEvery,
          timeoutMs: 10_000,
        }),
        probe({
          ...common,
          path: '/api/accounts/sign-in',
          requests: [{ headers: {}, body: JSON.stringify({ email: accounts.tenant, password }) }],
          perSec: TENANT.signInsPerSec,
          timeoutMs: 10_000,
        }),
      ]);
      return { upserts: u, signIns: s };
    };

    const postmaster = postmasterPid(server.dataDir);
    // Backends of the server's own pool and pg-boss's: busy (running a statement or inside a transaction), and waiting
    // for a lock; their peaks tell a pool held by waiters from one kept busy by work.
    const backends = async () => {
      const { rows } = await pool!.query<{ busy: number; locks: number }>(
        `select count(*) filter (where state = 'active' or state like 'idle in transaction%')::int as busy,
           count(*) filter (where wait_event_type = 'Lock')::int as locks
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      return rows[0] ?? { busy: 0, locks: 0 };
    };
    const window = () => {
      const meter = cpuMeter(server.pid, postmaster);
      let peak = rssMb(server.pid);
      const db = { peakBusy: 0, peakLockWaits: 0 };
      let sampling = false;
      const sampler = setInterval(() => {
        peak = Math.max(peak ?? 0, rssMb(server.pid) ?? 0);
        if (sampling) return;
        sampling = true;
        backends()
          .then((b) => {
            db.peakBusy = Math.max(db.peakBusy, b.busy);
            db.peakLockWaits = Math.max(db.peakLockWaits, b.locks);
          })
          .catch(() => undefined)
          .finally(() => (sampling = false));
      }, 250);
      return () => {
        clearInterval(sampler);
        return { cpu: meter(), serverRssPeakMb: peak, db: { ...db } };
      };
    };
    // Work an abuse left queued in the server (hashes, transactions waiting for a pool connection or a lock) goes on
    // after its sockets are gone; the next step starts once it is done, so that it measures its own abuse only.
    const settle = async (): Promise<{ ms: number; quiet: boolean }> => {
      const t0 = Date.now();
      while (Date.now() - t0 < SETTLE_MAX_MS) {
        const m = cpuMeter(server.pid, postmaster);
        await sleep(500);
        const c = m();
        if ((!c || c.server + c.postgres < 0.15) && (await backends()).busy <= 1) return { ms: Date.now() - t0, quiet: true };
      }
      log(`edge: the server was still busy after ${SETTLE_MAX_MS / 1000} s; measuring anyway`);
      return { ms: Date.now() - t0, quiet: false };
    };

    const slowSockets = S.slowSockets ?? config.HTTP_MAX_CONNECTIONS;
    const ctx: StepContext = {
      origin: server.origin,
      pool,
      seconds: S.seconds,
      floodConnections: S.floodConnections,
      loadConnections: S.loadConnections,
      slowSockets,
      victimEmail: accounts.victim,
      abusedKey: org.keys[TENANT.keys]!,
      upsertBody: upserts[0]!.body,
      runTenant,
      window,
      log,
    };

    log(
      `edge 0/${steps.length}: the tenant alone (${TENANT.upsertsPerSec} upserts/s over ${TENANT.keys} keys, a sign-in every ${1 / TENANT.signInsPerSec}s), ${S.seconds}s ...`,
    );
    // A first pass warms the server (JIT, pool connections, prepared statements) and is discarded: measured cold, the
    // idle reference came out four times the same tenant's p99 at the end of the run.
    await settle();
    await runTenant();
    await settle();
    const idle = await runTenant();
    const results: StepResult[] = [];
    for (const [i, step] of steps.entries()) {
      log(`edge ${i + 1}/${steps.length}: ${step.name}: ${step.what} ...`);
      const settled = await settle();
      results.push({ name: step.name, what: step.what, settled, ...(await step.run(ctx)) });
    }
    let idleAfter: Tenant | null = null;
    if (steps.length > 1) {
      log('edge: the tenant alone again, to show how much the machine drifted ...');
      await settle();
      idleAfter = await runTenant();
    }
    const extra = Object.fromEntries(
      Object.entries(process.env).filter(([k, v]) => SHOWN.test(k) && !SECRET.test(k) && v !== undefined),
    ) as Record<string, string>;
    return {
      settings: { ...S, slowSockets },
      server: {
        trustProxy: server.env.TRUST_PROXY ?? '',
        maxConnections: config.HTTP_MAX_CONNECTIONS,
        passwordHashCost: config.PASSWORD_HASH_COST,
        poolMax: config.DB_POOL_MAX,
        extra,
      },
      tenant: { ...TENANT, from: ADDR.tenant },
      idle,
      idleAfter,
      steps: results,
    };
  } finally {
    await pool?.end();
    log('edge: stopping server ...');
    await server.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
