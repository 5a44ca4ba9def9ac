/**
 * The edge phase's abusers that autocannon cannot play, because they must come from a chosen address of 127.0.0.0/8
 * (Linux routes the whole block to the loopback interface): slow connections that trickle a body, and closed-loop
 * floods of JSON POSTs. Each is bounded in count and time and stops every socket it opened.
 */
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SlowFigures {
  target: number;
  addresses: number;
  /** Connection attempts, the first `target` and every replacement of one the server closed. */
  opened: number;
  peakOpen: number;
  /** Still open, with the server waiting for their bodies, when the measured window ended. */
  openAtEnd: number;
  /** Closed by the server, by the status it answered first (`no answer`: closed without a byte, e.g. over the cap). */
  closedByServer: Record<string, number>;
  /** Connection attempts that failed before connecting. */
  connectFailed: number;
}

export interface SlowHold {
  /** Resolves once `target` connections are open, or after `ms` (a server that refuses them never lets it happen). */
  ramp(ms: number): Promise<void>;
  /** Counting starts afresh (the ramp's churn is not counted); the returned function reads the figures since. */
  measure(): () => SlowFigures & { seconds: number };
  stop(): void;
}

/**
 * Holds `target` connections from `addresses` (round robin), each sending a POST's headers with a `contentLength`-byte
 * JSON body announced, then one byte of it a second (whitespace, so the body stays valid JSON for as long as it lasts).
 * A connection the server closes is replaced, at most `openPerSec` a second and `maxOpens` in all: an attacker keeps
 * the count up.
 */
export function holdSlowConnections(o: {
  host: string;
  port: number;
  addresses: readonly string[];
  target: number;
  path: string;
  contentLength: number;
  openPerSec: number;
  maxOpens: number;
}): SlowHold {
  const open = new Set<net.Socket>();
  let connecting = 0;
  let next = 0;
  let stopped = false;
  const fresh = () => ({ opened: 0, peakOpen: open.size, closedByServer: {} as Record<string, number>, connectFailed: 0 });
  let f = fresh();
  let total = 0;
  const head =
    `POST ${o.path} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\ncontent-type: application/json\r\n` +
    `content-length: ${o.contentLength}\r\n\r\n{`;

  function connect() {
    const s = net.connect({ host: o.host, port: o.port, localAddress: o.addresses[next++ % o.addresses.length] });
    connecting++;
    total++;
    f.opened++;
    let connected = false;
    let reply = '';
    s.on('connect', () => {
      connecting--;
      connected = true;
      open.add(s);
      f.peakOpen = Math.max(f.peakOpen, open.size);
      s.write(head);
    });
    s.on('data', (d: Buffer) => {
      if (reply.length < 32) reply += d.toString('latin1', 0, Math.min(d.length, 32));
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      if (!connected) connecting--;
      open.delete(s);
      if (stopped) return;
      if (!connected) f.connectFailed++;
      else {
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(reply)?.[1] ?? (reply ? 'other bytes' : 'no answer');
        f.closedByServer[status] = (f.closedByServer[status] ?? 0) + 1;
      }
    });
  }

  const perTick = Math.max(1, Math.round(o.openPerSec / 20));
  const keeper = setInterval(() => {
    for (let i = 0; i < perTick && open.size + connecting < o.target && total < o.maxOpens; i++) connect();
  }, 50);
  const trickle = setInterval(() => {
    for (const s of open) if (s.writable) s.write(' ');
  }, 1000);

  return {
    async ramp(ms) {
      const deadline = Date.now() + ms;
      while (open.size < o.target && Date.now() < deadline) await sleep(100);
    },
    measure() {
      f = fresh();
      const t0 = performance.now();
      return () => ({
        ...f,
        target: o.target,
        addresses: o.addresses.length,
        openAtEnd: open.size,
        seconds: (performance.now() - t0) / 1000,
      });
    },
    stop() {
      stopped = true;
      clearInterval(keeper);
      clearInterval(trickle);
      for (const s of open) s.destroy();
    },
  };
}

export interface FloodFigures {
  seconds: number;
  /** Answers and failures that came back in the window. */
  requests: number;
  reqPerSec: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
}

export interface Flood {
  measure(): () => FloodFigures;
  /** Stops sending, lets in-flight requests finish for up to `graceMs`, then closes every socket. */
  stop(graceMs: number): Promise<void>;
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : 0;

/**
 * `connections` requests in flight from `localAddress` (closed loop: each sends its next request when its answer is
 * in), each built by `next(n)`. A failed request is followed by a short pause, so a refusing server is not spun on.
 */
export function startFlood(o: {
  origin: string;
  localAddress: string;
  connections: number;
  path: string;
  next: (n: number) => { headers?: Record<string, string>; body: string };
  timeoutMs: number;
  maxRequests: number;
}): Flood {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const url = new URL(o.path, o.origin);
  let n = 0;
  let stopping = false;
  let statuses: Record<string, number> = {};
  let latencies: number[] = [];

  const one = () =>
    new Promise<boolean>((resolve) => {
      const { headers, body } = o.next(n++);
      const t0 = performance.now();
      let settled = false;
      const settle = (status: string) => {
        if (settled) return;
        settled = true;
        statuses[status] = (statuses[status] ?? 0) + 1;
        latencies.push(performance.now() - t0);
        resolve(/^\d/.test(status));
      };
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          localAddress: o.localAddress,
          timeout: o.timeoutMs,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          res.resume();
          res.on('end', () => settle(String(res.statusCode)));
          res.on('error', () => settle('error'));
        },
      );
      req.on('timeout', () => {
        settle('timeout');
        req.destroy();
      });
      req.on('error', () => settle('error'));
      req.end(body);
    });

  const loop = async () => {
    while (!stopping && n < o.maxRequests) if (!(await one())) await sleep(10);
  };
  const loops = Array.from({ length: o.connections }, loop);

  return {
    measure() {
      statuses = {};
      latencies = [];
      const t0 = performance.now();
      return () => {
        const seconds = (performance.now() - t0) / 1000;
        const sorted = [...latencies].sort((a, b) => a - b);
        return {
          seconds,
          requests: sorted.length,
          reqPerSec: sorted.length / seconds,
          statuses: { ...statuses },
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
        };
      };
    },
    async stop(graceMs) {
      stopping = true;
      await Promise.race([Promise.all(loops), sleep(graceMs)]);
      agent.destroy();
      await Promise.all(loops);
    },
  };
}

/** One JSON POST from `localAddress`: the set-up's sign-ups. */
export function postJson(origin: string, path: string, body: unknown, localAddress: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      new URL(path, origin),
      {
        method: 'POST',
        localAddress,
        timeout: 60_000,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${path} within 60 s`)));
    req.on('error', reject);
    req.end(text);
  });
}
