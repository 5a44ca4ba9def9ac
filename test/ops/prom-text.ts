/** One sample of Prometheus's text format: `name{a="b",...} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus's text exposition format as prom-client writes it (one sample a line; `#` lines are help and type). */
export function parseMetrics(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

/** The value of the sample with exactly these labels; 0 when absent (a counter not yet incremented). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels);
  const s = samples.find(
    (x) => x.name === name && Object.keys(x.labels).length === want.length && want.every(([k, v]) => x.labels[k] === v),
  );
  return s?.value ?? 0;
}

/** GET /metrics of `origin`, parsed. */
export async function scrapeMetrics(
  origin: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; samples: Sample[] }> {
  const res = await fetch(`${origin}/metrics`, { headers });
  const text = await res.text();
  return { status: res.status, text, samples: res.status === 200 ? parseMetrics(text) : [] };
}
