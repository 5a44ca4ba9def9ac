/**
 * What `npm run bench:console` prints, as a pure function of its figures (checked on made-up ones by
 * console-report.test.ts; the bench itself drives a browser for a minute).
 */

export interface Stats {
  runs: number;
  medianMs: number;
  p95Ms: number;
}

/** Median and nearest-rank p95 of timings; a run of none is all zeros rather than NaN. */
export function stats(samples: number[]): Stats {
  if (samples.length === 0) return { runs: 0, medianMs: 0, p95Ms: 0 };
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  const p95 = s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]!;
  return { runs: s.length, medianMs: median, p95Ms: p95 };
}

/** What one page load cost on the wire: requests, and bytes as received (encoded bodies and headers). */
export interface Traffic {
  requests: number;
  /** Of those, answered by the browser's cache without reaching the server. */
  fromCache: number;
  bytes: number;
}

export interface ConsoleFigures {
  bundle: { files: { file: string; bytes: number; gzipBytes: number }[]; gzipBytes: number; gzipBudget: number };
  /** The static reference in the same browser and run: GET /healthz in a fresh context. */
  reference: Stats & Traffic;
  /** /app in a fresh context (nothing cached) until the sign-in heading is visible. */
  cold: Stats & Traffic;
  /** /app again in the same context (assets cached as immutable) until the sign-in heading is visible. */
  warm: Stats & Traffic;
  /** From pressing Sign in until the overview's charts are drawn (its heading before issue 29). */
  signedIn: Stats & Traffic;
  /** The sign-in call alone (POST /api/accounts/sign-in from Node): the password hash's share of signing in. */
  signInApi: Stats;
  /** CPU milliseconds per cold first screen (server and PostgreSQL), null without /proc. */
  cpuPerFirstScreen: { serverMs: number; postgresMs: number } | null;
  /** The same for the reference's loads: the background the server spends meanwhile, and one small request. */
  cpuPerReference: { serverMs: number; postgresMs: number } | null;
}

const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
const ms = (n: number) => `${n.toFixed(0)} ms`;
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}x` : 'n/a');

function line(name: string, s: Stats & Traffic, ref: Stats): string {
  return (
    `${name.padEnd(34)} median ${ms(s.medianMs).padStart(7)}, p95 ${ms(s.p95Ms).padStart(7)} ` +
    `(${ratio(s.medianMs, ref.medianMs)} the reference's median; ${s.requests} requests${s.fromCache ? `, ${s.fromCache} from the cache` : ''}, ` +
    `${kb(s.bytes)} received)`
  );
}

export function formatConsole(f: ConsoleFigures): string {
  const b = f.bundle;
  const out = [
    'Console bundle (apps/console/build.ts):',
    ...b.files.map((x) => `  ${x.file.padEnd(14)} ${kb(x.bytes).padStart(9)} minified, ${kb(x.gzipBytes).padStart(8)} gzipped`),
    `  total gzipped ${kb(b.gzipBytes)} of the ${kb(b.gzipBudget)} budget (${((100 * b.gzipBytes) / b.gzipBudget).toFixed(0)}%): ` +
      (b.gzipBytes <= b.gzipBudget ? 'within' : 'OVER'),
    `Time to first screen, system Chromium, ${f.cold.runs} runs each:`,
    `  ${'reference: GET /healthz, cold'.padEnd(34)} median ${ms(f.reference.medianMs).padStart(7)}, p95 ${ms(f.reference.p95Ms).padStart(7)} ` +
      `(${f.reference.requests} request, ${kb(f.reference.bytes)} received)`,
    `  ${line('/app to sign-in heading, cold', f.cold, f.reference)}`,
    `  ${line('/app to sign-in heading, warm', f.warm, f.reference)}`,
    `  ${line('Sign in to overview charts', f.signedIn, f.reference)}`,
    `  ${'of which the sign-in call alone'.padEnd(34)} median ${ms(f.signInApi.medianMs).padStart(7)}, p95 ${ms(f.signInApi.p95Ms).padStart(7)} ` +
      '(POST /api/accounts/sign-in from Node: mostly the password hash)',
    f.cpuPerFirstScreen
      ? `CPU per cold first screen: server ${f.cpuPerFirstScreen.serverMs.toFixed(2)} ms, postgres ${f.cpuPerFirstScreen.postgresMs.toFixed(2)} ms` +
        (f.cpuPerReference
          ? ` (per reference load, measured alike: server ${f.cpuPerReference.serverMs.toFixed(2)} ms, postgres ${f.cpuPerReference.postgresMs.toFixed(2)} ms)`
          : '')
      : 'CPU per cold first screen: not measured (no /proc)',
  ];
  return out.join('\n');
}
