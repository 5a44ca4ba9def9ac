import http from 'node:http';
import { percentile } from './soak-rules.ts';
import type { SoakWorkspace } from './soak-setup.ts';
import { EMAIL_DOMAIN, seedEmail, workload } from './workload.ts';

/** The mix: what a workspace's website and integrations do all day, plus /healthz as the in-run reference. */
export const KINDS = ['upsert', 'search', 'form', 'pageview', 'healthz'] as const;
export type Kind = (typeof KINDS)[number];

/** Requests per second of each kind at SOAK_RATE=1: moderate on purpose (a soak looks for drift, not the ceiling). */
export const BASE_RATES: Record<Kind, number> = { upsert: 20, search: 10, form: 2, pageview: 20, healthz: 5 };

/** Share of single upserts naming a seeded (existing) contact; the rest create one, and so a delivery. */
export const EXISTING_RATIO = 0.5;

/** One kind over one interval. Latency is from the request's start to its whole answer. */
export interface KindFigures {
  count: number;
  perSec: number;
  errors: number;
  /** Unexpected answers by status ("net" for no answer), so a failing run says what failed. */
  errorStatuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface SoakLoad {
  /** Each kind's figures since the previous call (or the start); starts the next interval. */
  take(): Record<Kind, KindFigures>;
  /** Deliveries the answers so far imply: one per new contact of an upsert, two per form submission. */
  caused(): number;
  /** Stops sending and resolves once every request in flight has been answered. */
  stop(): Promise<void>;
}

/** Past this many unanswered requests of one kind the server is not keeping up: further ones count as errors, unsent. */
const MAX_IN_FLIGHT = 200;
const TICK_MS = 10;
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Connections the load keeps to the server. All of it comes from one address, and the server holds one address to
 * 100 connections (HTTP_MAX_CONNECTIONS_PER_ADDRESS, an abuse defence): when the machine stalls for a few seconds, an
 * unbounded client opens more and has them refused. Bounded, its requests queue in the client and the stall is seen
 * as latency (measured from each request's due time, to the 10 ms tick), as a crowd of browsers behind many addresses would see it.
 */
const MAX_SOCKETS = 64;

interface Req {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request over the load's keep-alive pool; rejects with the socket's error code when there is no answer. */
function call(agent: http.Agent, origin: string, r: Req): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${origin}${r.path}`,
      { agent, method: r.method ?? 'GET', headers: r.headers, timeout: REQUEST_TIMEOUT_MS },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(r.body);
  });
}

interface Open {
  latencies: number[];
  errors: number;
  errorStatuses: Record<string, number>;
  startedAt: number;
}

/**
 * An open-loop load at fixed rates: request n of a kind is due at n / rate seconds, whatever the answers take, so a
 * slow server is seen as latency and backlog rather than hidden by a load that waits for it. Workspaces are taken in
 * turn, which keeps every key, form and organization far below its per-minute limit.
 */
export function startSoakLoad(o: {
  origin: string;
  workspaces: readonly SoakWorkspace[];
  rates: Record<Kind, number>;
  seeds: number;
}): SoakLoad {
  const run = Date.now().toString(36);
  const rows = workload({ phase: `soak-${run}`, seedCount: o.seeds, existingRatio: EXISTING_RATIO });
  const t0 = performance.now();
  const issued = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  const inFlight = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  const fresh = (): Open => ({ latencies: [], errors: 0, errorStatuses: {}, startedAt: performance.now() });
  let open = Object.fromEntries(KINDS.map((k) => [k, fresh()])) as Record<Kind, Open>;
  const pending = new Set<Promise<void>>();
  let caused = 0;

  const fail = (kind: Kind, status: string) => {
    open[kind].errors++;
    open[kind].errorStatuses[status] = (open[kind].errorStatuses[status] ?? 0) + 1;
  };

  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
  const request = (kind: Kind, n: number): Req & { expect: number; onBody?: (body: string) => void } => {
    const ws = o.workspaces[n % o.workspaces.length]!;
    const json = { authorization: `Bearer ${ws.publicKey}`, 'content-type': 'application/json' };
    switch (kind) {
      case 'upsert':
        return {
          path: '/api/v1/contacts/upsert',
          method: 'POST',
          headers: json,
          body: JSON.stringify(rows.row()),
          expect: 200,
          onBody: (body) => {
            if (body.includes('"created":true')) caused++;
          },
        };
      case 'search':
        return {
          path: `/api/v1/contacts/search?email=${encodeURIComponent(seedEmail(Math.floor(Math.random() * o.seeds)))}`,
          headers: { authorization: json.authorization },
          expect: 200,
        };
      case 'form':
        return {
          path: `/api/forms/${ws.formId}/submit`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: `soak-form-${run}-${n}@${EMAIL_DOMAIN}`, first_name: 'Ada', message: 'Please call me back.' }),
          expect: 200,
          // A new email each: contact.created and form.submitted.
          onBody: () => {
            caused += 2;
          },
        };
      case 'pageview': {
        // A site's visitors come back (a pool of ids), and one view in ten names a known contact, as a link in a mail does.
        const view = {
          org: ws.orgId,
          url: `https://www.example.com/pricing/${n % 40}`,
          title: 'Pricing',
          referrer: 'https://search.example.org/',
          visitor: `soakvisitor${n % 5000}`,
          ...(n % 10 === 0 ? { email: seedEmail(n % o.seeds) } : {}),
        };
        return {
          path: '/api/track/pageview',
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: JSON.stringify(view),
          expect: 202,
        };
      }
      case 'healthz':
        return { path: '/healthz', expect: 200 };
    }
  };

  const send = (kind: Kind, n: number) => {
    const r = request(kind, n);
    inFlight[kind]++;
    const started = performance.now();
    const p = call(agent, o.origin, r)
      .then((res) => {
        if (res.status !== r.expect) fail(kind, String(res.status));
        else {
          open[kind].latencies.push(performance.now() - started);
          r.onBody?.(res.body);
        }
      })
      .catch((err: unknown) => fail(kind, `net ${(err as { code?: string }).code ?? 'error'}`))
      .finally(() => {
        inFlight[kind]--;
        pending.delete(p);
      });
    pending.add(p);
  };

  const tick = () => {
    const elapsed = (performance.now() - t0) / 1000;
    for (const kind of KINDS) {
      const due = Math.floor(elapsed * o.rates[kind]);
      while (issued[kind] < due) {
        const n = issued[kind]++;
        if (inFlight[kind] >= MAX_IN_FLIGHT) fail(kind, 'not sent: too many in flight');
        else send(kind, n);
      }
    }
  };
  const timer = setInterval(tick, TICK_MS);

  return {
    take() {
      const now = performance.now();
      const out = {} as Record<Kind, KindFigures>;
      for (const kind of KINDS) {
        const w = open[kind];
        const sorted = w.latencies.sort((a, b) => a - b);
        const count = sorted.length + w.errors;
        out[kind] = {
          count,
          perSec: count / ((now - w.startedAt) / 1000),
          errors: w.errors,
          errorStatuses: w.errorStatuses,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          maxMs: sorted.at(-1) ?? Number.NaN,
        };
      }
      open = Object.fromEntries(KINDS.map((k) => [k, fresh()])) as Record<Kind, Open>;
      return out;
    },
    caused: () => caused,
    async stop() {
      clearInterval(timer);
      await Promise.allSettled([...pending]);
      agent.destroy();
    },
  };
}
