/**
 * `node test/bench/tracing.ts`: what OpenTelemetry traces cost the single upsert, on this machine, in one run.
 *
 * Two real servers on embedded PostgreSQL, one with tracing off (the reference) and one exporting OTLP/HTTP protobuf
 * (the default protocol) to a local sink that answers 200, measured in turns (off, on, off, on) so that drift in the
 * machine's load falls on both. Prints each turn's req/s, p99 and server CPU per request, and the on/off ratios. It
 * reports; it never fails on timings. BENCH_TRACING_SECONDS (5) is each turn's measured window, BENCH_TRACING_CONNECTIONS
 * (10) autocannon's connections.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpuMeter, postmasterPid } from './cpu.ts';
import { type HttpPhaseResult, runSingleUpserts } from './http-load.ts';
import { type BenchServer, startServer } from './server.ts';
import { clusterUrl, createBenchOrg } from './setup.ts';
import { workload } from './workload.ts';

const seconds = Number(process.env.BENCH_TRACING_SECONDS ?? 5);
const connections = Number(process.env.BENCH_TRACING_CONNECTIONS ?? 10);
const log = (msg: string) => process.stderr.write(`${msg}\n`);

async function main() {
  let exports = 0;
  let exportedBytes = 0;
  const types = new Set<string>();
  const sink = createServer((req, res) => {
    types.add(String(req.headers['content-type']));
    req.on('data', (c: Buffer) => (exportedBytes += c.length));
    req.on('end', () => {
      exports++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const servers: BenchServer[] = [];
  try {
    log('starting a server with tracing off and one with tracing on ...');
    const off = await startServer({ V1_REFUSAL_DELAY_MS: '0' });
    servers.push(off);
    const on = await startServer({ V1_REFUSAL_DELAY_MS: '0', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl });
    servers.push(on);
    // 600 requests per minute per key: enough keys that no turn gets near it.
    const keysOf = async (s: BenchServer) => (await createBenchOrg(await clusterUrl(s.dataDir), 60)).keys;
    const setups = [
      { name: 'off', server: off, keys: await keysOf(off) },
      { name: 'on', server: on, keys: await keysOf(on) },
    ];
    const results: Record<string, HttpPhaseResult[]> = { off: [], on: [] };
    for (let turn = 0; turn < 2; turn++)
      for (const s of setups) {
        const half = s.keys.slice(turn * 30, turn * 30 + 30);
        const postmaster = postmasterPid(s.server.dataDir);
        const r = await runSingleUpserts(
          { origin: s.server.origin, keys: half, connections, warmupSeconds: 1, seconds, meter: () => cpuMeter(s.server.pid, postmaster) },
          workload({ phase: `${s.name}-${turn}`, seedCount: 0, existingRatio: 0 }),
        );
        results[s.name]!.push(r);
        const cpuMs = r.cpu ? ((r.cpu.server / r.reqPerSec) * 1000).toFixed(3) : 'n/a';
        log(
          `tracing ${s.name}, turn ${turn + 1}: ${r.reqPerSec.toFixed(0)} req/s, p99 ${r.latencyMs.p99} ms, server CPU ${cpuMs} ms/req, non-2xx ${r.non2xx}`,
        );
      }
    const mean = (rs: HttpPhaseResult[], f: (r: HttpPhaseResult) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
    const rate = (k: string) => mean(results[k]!, (r) => r.reqPerSec);
    const cpu = (k: string) => mean(results[k]!, (r) => (r.cpu ? r.cpu.server / r.reqPerSec : Number.NaN)) * 1000;
    const p99 = (k: string) => mean(results[k]!, (r) => r.latencyMs.p99);
    const out = process.stdout;
    out.write(`\nLeadwire tracing benchmark (${new Date().toISOString()}), ${connections} connections, ${seconds} s per turn\n`);
    out.write(
      `  off (reference): ${rate('off').toFixed(0)} req/s, server CPU ${cpu('off').toFixed(3)} ms/req, p99 ${p99('off').toFixed(1)} ms\n`,
    );
    out.write(
      `  on:              ${rate('on').toFixed(0)} req/s, server CPU ${cpu('on').toFixed(3)} ms/req, p99 ${p99('on').toFixed(1)} ms\n`,
    );
    out.write(`  on/off: throughput ${(rate('on') / rate('off')).toFixed(2)}x, server CPU ${(cpu('on') / cpu('off')).toFixed(2)}x\n`);
    out.write(`  exported: ${exports} OTLP requests (${[...types].join(', ')}), ${(exportedBytes / 1024).toFixed(0)} KiB\n`);
    out.write(
      `BENCH_RESULT ${JSON.stringify({ off: { reqPerSec: rate('off'), serverCpuMs: cpu('off') }, on: { reqPerSec: rate('on'), serverCpuMs: cpu('on') }, exports })}\n`,
    );
  } finally {
    for (const s of servers) await s.stop();
    sink.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
