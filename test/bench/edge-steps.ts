/**
 * The edge phase's abuses, one address each, each measured beside the well-behaved tenant. Every step starts its abuse,
 * lets it reach its steady state, measures the tenant, the abuse and the CPU over the same window, then stops the
 * abuse and every socket it opened.
 */
import { generateKeyValue } from '#core/auth/key-material.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import type pg from 'pg';
import type { CpuShare } from './cpu.ts';
import { type Flood, type FloodFigures, holdSlowConnections, type SlowFigures, startFlood } from './edge-abuse.ts';
import { figures, FLOOD_KEYS, keyLookups, spendKey } from './limits.ts';
import type { ProbeResult } from './probe.ts';

/** Addresses on the loopback interface: the tenant's, a proxy the server trusts, and one per abuse. */
export const ADDR = {
  tenant: '127.0.0.2',
  proxy: '127.0.0.3',
  /** autocannon cannot choose its address: the kernel gives it the destination's. */
  autocannon: '127.0.0.1',
  slowOne: '127.0.1.1',
  slowMany: Array.from({ length: 250 }, (_, i) => `127.0.2.${i + 1}`),
  signUp: '127.0.3.1',
  signInOne: '127.0.4.1',
  signInMany: '127.0.5.1',
};

export interface Tenant {
  upserts: ProbeResult;
  signIns: ProbeResult;
}

export interface AbuseFigures {
  from: string;
  /** Requests (connections opened, for the slow connections) per second in the window, and their outcomes. */
  reqPerSec: number;
  requests: number;
  statuses: Record<string, number>;
  p50: number | null;
  p99: number | null;
  slow?: SlowFigures;
  /** Unknown-key flood: api_keys look-ups by hash in the window, less the tenant's own. */
  keyLookups?: number;
}

export interface StepResult {
  name: string;
  what: string;
  /** How long the step waited for the previous one's queued work to finish, and whether it did. */
  settled: { ms: number; quiet: boolean };
  tenant: Tenant;
  abuse: AbuseFigures;
  cpu: CpuShare | null;
  serverRssPeakMb: number | null;
  /** Peaks, sampled every 250 ms, of PostgreSQL backends busy and of those waiting for a lock. */
  db: { peakBusy: number; peakLockWaits: number };
}

export interface StepContext {
  origin: string;
  pool: pg.Pool;
  seconds: number;
  floodConnections: number;
  loadConnections: number;
  slowSockets: number;
  victimEmail: string;
  abusedKey: string;
  upsertBody: string;
  runTenant: () => Promise<Tenant>;
  /** Starts the CPU and memory measurement of a window; calling the result ends it. */
  window: () => () => Pick<StepResult, 'cpu' | 'serverRssPeakMb' | 'db'>;
  log: (msg: string) => void;
}

export interface Step {
  name: string;
  what: string;
  run: (c: StepContext) => Promise<Omit<StepResult, 'name' | 'what' | 'settled'>>;
}

const run = Date.now().toString(36);
/** Unique for each request, so no forwarded address is ever seen twice. */
const forwarded = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
const WARMUP_MS = 2_000;

/**
 * Reads the abuse's figures when the window ends, not when the tenant's last answer is in: a tenant request still
 * waiting for its answer must not stretch the window the abuse and the CPU are measured over.
 */
function afterWindow<T>(c: StepContext, read: () => T): Promise<T> {
  return sleep(c.seconds * 1000).then(read);
}

async function besideFlood(c: StepContext, from: string, start: () => Flood): Promise<Omit<StepResult, 'name' | 'what' | 'settled'>> {
  const flood = start();
  try {
    await sleep(WARMUP_MS);
    const end = c.window();
    const measured = flood.measure();
    const [tenant, [f, w]] = await Promise.all([c.runTenant(), afterWindow(c, () => [measured(), end()] as const)]);
    return { tenant, abuse: { from, ...(f satisfies FloodFigures) }, ...w };
  } finally {
    await flood.stop(2_000);
  }
}

function slowStep(name: string, addresses: readonly string[]): Step {
  const where = addresses.length === 1 ? `one address (${addresses[0]})` : `${addresses.length} addresses (${addresses[0]}...)`;
  return {
    name,
    what: `slow connections up to the cap from ${where}: POST /api/accounts/sign-up, content-length 1,000,000, 1 byte/s`,
    async run(c) {
      const { hostname, port } = new URL(c.origin);
      const hold = holdSlowConnections({
        host: hostname,
        port: Number(port),
        addresses,
        target: c.slowSockets,
        path: '/api/accounts/sign-up',
        contentLength: 1_000_000,
        openPerSec: 1_000,
        maxOpens: c.slowSockets * 20,
      });
      try {
        await hold.ramp(5_000);
        const end = c.window();
        const measured = hold.measure();
        const [tenant, [slow, w]] = await Promise.all([c.runTenant(), afterWindow(c, () => [measured(), end()] as const)]);
        return {
          tenant,
          abuse: {
            from: where,
            reqPerSec: slow.opened / slow.seconds,
            requests: slow.opened,
            statuses: { ...slow.closedByServer, 'still open': slow.openAtEnd },
            p50: null,
            p99: null,
            slow,
          },
          ...w,
        };
      } finally {
        hold.stop();
      }
    },
  };
}

/**
 * Exactly `floodConnections` requests in flight: no request times out before the flood stops (a client giving up and
 * sending another would leave the first one's work behind in the server, piling up more than the step means to send).
 */
const floodOpts = (c: StepContext) => ({
  origin: c.origin,
  connections: c.floodConnections,
  timeoutMs: WARMUP_MS + c.seconds * 1000 + 10_000,
  maxRequests: 1_000_000,
});

export const STEPS: Step[] = [
  slowStep('slow-one', [ADDR.slowOne]),
  slowStep('slow-many', ADDR.slowMany),
  {
    name: 'signup',
    what: 'sign-up flood from one address: unique emails, default password hashing cost',
    run: (c) =>
      besideFlood(c, ADDR.signUp, () =>
        startFlood({
          ...floodOpts(c),
          localAddress: ADDR.signUp,
          path: '/api/accounts/sign-up',
          next: (n) => ({
            body: JSON.stringify({
              organizationName: `Flood ${n}`,
              email: `flood-${run}-${n}@edge.example.com`,
              password: `flood password ${n}`,
            }),
          }),
        }),
      ),
  },
  {
    name: 'signin-one',
    what: 'sign-in flood from one address, wrong passwords for one account, X-Forwarded-For rotating (not trusted)',
    run: (c) =>
      besideFlood(c, ADDR.signInOne, () =>
        startFlood({
          ...floodOpts(c),
          localAddress: ADDR.signInOne,
          path: '/api/accounts/sign-in',
          next: (n) => ({
            headers: { 'x-forwarded-for': forwarded(n) },
            body: JSON.stringify({ email: c.victimEmail, password: `guess ${n}` }),
          }),
        }),
      ),
  },
  {
    name: 'signin-many',
    what: 'sign-in flood from one address, wrong passwords for a new account each time, X-Forwarded-For rotating (not trusted)',
    run: (c) =>
      besideFlood(c, ADDR.signInMany, () =>
        startFlood({
          ...floodOpts(c),
          localAddress: ADDR.signInMany,
          path: '/api/accounts/sign-in',
          next: (n) => ({
            headers: { 'x-forwarded-for': forwarded(n) },
            body: JSON.stringify({ email: `user-${run}-${n}@edge.example.com`, password: `guess ${n}` }),
          }),
        }),
      ),
  },
  {
    name: 'signin-proxy',
    what: `sign-in flood through the trusted proxy (${ADDR.proxy}), a new forwarded address and account each time`,
    run: (c) =>
      besideFlood(c, `${ADDR.proxy} forwarding`, () =>
        startFlood({
          ...floodOpts(c),
          localAddress: ADDR.proxy,
          path: '/api/accounts/sign-in',
          next: (n) => ({
            headers: { 'x-forwarded-for': forwarded(n) },
            body: JSON.stringify({ email: `proxied-${run}-${n}@edge.example.com`, password: `guess ${n}` }),
          }),
        }),
      ),
  },
  {
    name: 'unknown-keys',
    what: `unknown-key flood from one address (${ADDR.autocannon}): ${FLOOD_KEYS.toLocaleString('en-US')} keys, autocannon`,
    async run(c) {
      const unknown = Array.from({ length: FLOOD_KEYS }, () => generateKeyValue());
      let next = 0;
      const request = {
        method: 'POST',
        path: '/api/v1/contacts/upsert',
        headers: { 'content-type': 'application/json' },
        body: c.upsertBody,
        setupRequest: (req: { headers: Record<string, string> }) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${unknown[next++ % unknown.length]}` },
        }),
      };
      const load = (seconds: number) =>
        autocannon({ url: c.origin, connections: c.loadConnections, timeout: 30, requests: [request], duration: seconds });
      await load(WARMUP_MS / 1000);
      const before = await keyLookups(c.pool);
      const end = c.window();
      const [r, tenant, w] = await Promise.all([load(c.seconds), c.runTenant(), afterWindow(c, end)]);
      const after = await keyLookups(c.pool);
      const f = figures(r);
      const statuses = f.errors ? { ...f.statusCodes, error: f.errors } : f.statusCodes;
      const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
      const keyLookupsByFlood = Math.max(0, after - before - tenant.upserts.requests);
      return {
        tenant,
        abuse: { from: ADDR.autocannon, reqPerSec: f.reqPerSec, requests, statuses, p50: f.p50, p99: f.p99, keyLookups: keyLookupsByFlood },
        ...w,
      };
    },
  },
  {
    name: 'spent-key',
    what: `one key over its 600/min hammered from one address (${ADDR.autocannon}), autocannon`,
    async run(c) {
      const request = {
        method: 'POST',
        path: '/api/v1/contacts/upsert',
        headers: { authorization: `Bearer ${c.abusedKey}`, 'content-type': 'application/json' },
        body: c.upsertBody,
      };
      const load = (seconds: number) =>
        autocannon({ url: c.origin, connections: c.loadConnections, timeout: 30, requests: [request], duration: seconds });
      // Over its limit in this minute and the next two, so every measured request is one to refuse.
      await spendKey(c.pool, c.abusedKey);
      await load(WARMUP_MS / 1000);
      const end = c.window();
      const [r, tenant, w] = await Promise.all([load(c.seconds), c.runTenant(), afterWindow(c, end)]);
      const f = figures(r);
      const statuses = f.errors ? { ...f.statusCodes, error: f.errors } : f.statusCodes;
      const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
      return { tenant, abuse: { from: ADDR.autocannon, reqPerSec: f.reqPerSec, requests, statuses, p50: f.p50, p99: f.p99 }, ...w };
    },
  },
];
