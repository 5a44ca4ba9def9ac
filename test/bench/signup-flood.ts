import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import pg from 'pg';
import { startServer } from './server.ts';
import { clusterUrl, createBenchOrg } from './setup.ts';

/**
 * Issue 16's scenarios: sign-ups (or, with `sign-in`, wrong-password sign-ins from rotating loopback addresses) with 8
 * in flight, scrypt at the production cost, while another tenant sends /v1 upserts one at a time, with and without
 * Idempotency-Key. Prints each probe's p50/p99/max and the flood's statuses.
 * Run: node test/bench/signup-flood.ts [seconds] [sign-up|sign-in]
 */
const SECONDS = Number(process.argv[2] ?? 15);
const KIND = process.argv[3] === 'sign-in' ? 'sign-in' : 'sign-up';
const IN_FLIGHT = 8;

/** A POST from a chosen loopback address (every 127.x.y.z is local on Linux), so each attempt can come from a new one. */
function postFrom(url: string, from: string, body: unknown): Promise<number> {
  const payload = JSON.stringify(body);
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!) : 0;
};
const summary = (xs: number[]) => `n=${xs.length} p50=${pct(xs, 50)} p99=${pct(xs, 99)} max=${pct(xs, 100)} ms`;

const server = await startServer({ PASSWORD_HASH_COST: process.env.FLOOD_HASH_COST ?? '17', LOG_LEVEL: 'warn' });
try {
  const url = await clusterUrl(server.dataDir);
  // 600 requests per minute per key: the probe rotates through enough keys never to meet the limit.
  const { keys } = await createBenchOrg(url, 20);
  let turn = 0;
  const admin = new pg.Client(url);
  admin.on('error', () => {});
  await admin.connect();
  const backends = async () =>
    (await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where backend_type = 'client backend'`)).rows[0]!.n;

  const upsert = async (idempotent: boolean) => {
    const started = performance.now();
    const res = await fetch(`${server.origin}/api/v1/contacts/upsert`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${keys[turn++ % keys.length]}`,
        'content-type': 'application/json',
        ...(idempotent ? { 'idempotency-key': randomUUID() } : {}),
      },
      body: JSON.stringify({ email: `p-${randomUUID()}@probe.example.com` }),
    });
    await res.text();
    if (res.status >= 300) throw new Error(`upsert answered ${res.status}`);
    const ms = performance.now() - started;
    if (process.env.FLOOD_TRACE && ms > 500)
      console.log(`slow ${idempotent ? 'idempotent' : 'plain'} upsert ${Math.round(ms)} ms ended ${Date.now() % 100000}`);
    return ms;
  };
  const health = async () => {
    const started = performance.now();
    await (await fetch(`${server.origin}/healthz`)).text();
    return performance.now() - started;
  };

  async function probeFor(ms: number) {
    const out = { idem: [] as number[], plain: [] as number[], health: [] as number[] };
    const end = performance.now() + ms;
    while (performance.now() < end) {
      out.idem.push(await upsert(true));
      out.plain.push(await upsert(false));
      out.health.push(await health());
    }
    return out;
  }

  const quiet = await probeFor(3_000);
  console.log(`quiet: idempotent ${summary(quiet.idem)} | plain ${summary(quiet.plain)} | healthz ${summary(quiet.health)}`);

  let stop = false;
  const statuses: Record<string, number> = {};
  const signUps: number[] = [];
  const flooder = async (n: number) => {
    for (let i = 0; !stop; i++) {
      const started = performance.now();
      try {
        const from = `127.${1 + (n % 200)}.${(i >> 8) & 255}.${1 + (i & 127)}`;
        const status =
          KIND === 'sign-up'
            ? await postFrom(`${server.origin}/api/accounts/sign-up`, from, {
                organizationName: 'Flood',
                email: `flood-${n}-${i}-${randomUUID()}@flood.example.com`,
                password: 'a flood of passwords',
              })
            : await postFrom(`${server.origin}/api/accounts/sign-in`, from, {
                email: `victim${i % 50}@flood.example.com`,
                password: `guess ${i}`,
              });
        statuses[status] = (statuses[status] ?? 0) + 1;
      } catch (err) {
        const e = err as Error & { code?: string; cause?: { code?: string } };
        const code = String(e.code ?? e.cause?.code ?? e.message);
        statuses[code] = (statuses[code] ?? 0) + 1;
      }
      signUps.push(performance.now() - started);
    }
  };
  const before = await backends();
  /** The server's resident memory, read from /proc: what scrypt's 128 MB per hash adds up to. */
  const rssMb = async () => {
    const status = await readFile(`/proc/${server.pid}/status`, 'utf8').catch(() => '');
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  };
  const rssBefore = await rssMb();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    void backends().then(
      (n) => (peak = Math.max(peak, n)),
      () => {},
    );
    void rssMb().then((mb) => (rssPeak = Math.max(rssPeak, mb)));
  }, 200);
  let peak = before;
  const floods = Array.from({ length: IN_FLIGHT }, (_, n) => flooder(n));
  const loaded = await probeFor(SECONDS * 1000);
  stop = true;
  await Promise.all(floods);
  clearInterval(sampler);
  const newConnections = (
    await admin.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and backend_start > now() - make_interval(secs => $1)`,
      [SECONDS + 2],
    )
  ).rows[0]!.n;
  console.log(`flood: ${KIND}s ${summary(signUps)} statuses ${JSON.stringify(statuses)}`);
  console.log(`flood: idempotent ${summary(loaded.idem)} | plain ${summary(loaded.plain)} | healthz ${summary(loaded.health)}`);
  console.log(
    `backends: before ${before}, peak ${peak}, started during the flood and still open ${newConnections}; server RSS ${rssBefore} -> peak ${rssPeak} MB`,
  );
  await admin.end();
} catch (err) {
  console.error('failed:', err, (err as { cause?: unknown }).cause);
} finally {
  await server.stop();
}
