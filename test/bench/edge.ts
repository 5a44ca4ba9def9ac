/**
 * `npm run bench:edge` (also `BENCH_ONLY=edge npm run bench`): the HTTP edge under abuse, on this machine, in one run.
 *
 * Starts the real server on a fresh embedded PostgreSQL and measures a well-behaved tenant (its own address, 127.0.0.2)
 * alone, then beside each abuse in turn, each from one address of 127.0.0.0/8: slow connections up to the cap (from one
 * address, then from 250), a sign-up flood, sign-in floods (one account; many accounts; many accounts through a
 * trusted proxy with rotating X-Forwarded-For), an unknown-key flood and a key over its limit. Prints the tenant's
 * p50/p99 beside each, the ratio to idle with the 2x goal met or missed, each abuse's rate, status mix and server CPU
 * per request, and a final `BENCH_RESULT {json}` line. It reports; it never fails on timings.
 *
 * The server keeps its defaults, the password hashing cost among them (what a flood costs depends on it), and takes
 * every setting from the environment (e.g. `HTTP_MAX_CONNECTIONS=200 npm run bench:edge`). TRUST_PROXY defaults to the
 * bench's proxy address, 127.0.0.3.
 *
 * Settings (environment): BENCH_EDGE_SECONDS (10, measured window per step), BENCH_EDGE_FLOOD_CONNECTIONS (32, sign-up
 * and sign-in requests in flight), BENCH_EDGE_CONNECTIONS (50, autocannon connections), BENCH_EDGE_SLOW_SOCKETS (the
 * server's HTTP_MAX_CONNECTIONS), BENCH_EDGE_ONLY (comma list of steps: slow-one, slow-many, signup, signin-one,
 * signin-many, signin-proxy, unknown-keys, spent-key).
 */
import os from 'node:os';
import { machineBusyCores } from './cpu.ts';
import { edgeGoals, formatEdge } from './edge-report.ts';
import { type EdgeResult, type EdgeSettings, runEdge } from './edge-run.ts';
import { envNumber } from './setup.ts';

export function edgeSettings(): EdgeSettings {
  const slow = process.env.BENCH_EDGE_SLOW_SOCKETS;
  return {
    seconds: envNumber('BENCH_EDGE_SECONDS', 10, 2),
    floodConnections: Math.round(envNumber('BENCH_EDGE_FLOOD_CONNECTIONS', 32, 1)),
    loadConnections: Math.round(envNumber('BENCH_EDGE_CONNECTIONS', 50, 1)),
    slowSockets: slow ? Math.round(envNumber('BENCH_EDGE_SLOW_SOCKETS', 0, 1)) : null,
    only: (process.env.BENCH_EDGE_ONLY ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
}

/** The result with its goals, for `BENCH_RESULT` (JSON writes an unbounded p99, Infinity, as null). */
export function edgeJson(r: EdgeResult) {
  return { ...r, goals: edgeGoals(r) };
}

async function main() {
  const log = (msg: string) => process.stderr.write(`${msg}\n`);
  const busyBefore = await machineBusyCores(2000);
  if (busyBefore !== null && busyBefore > 0.25)
    log(`warning: ${busyBefore.toFixed(2)} cores were already busy before the benchmark started; its figures will be noisy`);
  const r = await runEdge(edgeSettings(), log);
  const cpus = os.cpus();
  const out = process.stdout;
  out.write(`\nLeadwire edge benchmark (${new Date().toISOString()})\n`);
  out.write(
    `machine: ${cpus.length} x ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; node ${process.version}\n`,
  );
  if (busyBefore !== null) out.write(`before start: ${busyBefore.toFixed(2)} of ${cpus.length} cores busy with other work\n`);
  out.write(`${formatEdge(r)}\n\nBENCH_RESULT ${JSON.stringify({ edge: edgeJson(r) })}\n`);
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
