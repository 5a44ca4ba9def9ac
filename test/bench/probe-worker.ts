/**
 * A well-behaved client, on a thread of its own so that its latencies are not delayed by the load generator's event
 * loop: it POSTs the given requests in turn (cycled) at `perSec`, open loop (a slow answer does not delay the next
 * request). Posts `{ latencies, statuses }` when `durationMs` is over and the last answer is in: the latency of every
 * answer, whether it was 2xx, and every outcome by status (`error` and `timeout` when no answer came).
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

export interface ProbeRequest {
  headers: Record<string, string>;
  body: string;
}

export interface ProbeInput {
  origin: string;
  path: string;
  requests: ProbeRequest[];
  perSec: number;
  durationMs: number;
  /** Where the client's connections come from (an address of 127.0.0.0/8), so an abuser's address is not its own. */
  localAddress?: string;
  /** A new connection per request: each request must then get through the server's connection handling too. */
  freshConnections?: boolean;
  /**
   * Every `every`-th request carries a new Idempotency-Key; once its 2xx answer is in, it is sent again (a replay that
   * must be answered from the store) in the slot half-way to the next one.
   */
  idempotencyEvery?: number;
  /** A request without an answer by then is a failure (`timeout`); bounds the probe's run time. */
  timeoutMs?: number;
}

export interface ProbeOutput {
  latencies: number[];
  /** Parallel to `latencies`: whether that answer was 2xx. */
  ok: boolean[];
  statuses: Record<string, number>;
}

const input = workerData as ProbeInput;
const agent = input.freshConnections ? undefined : new http.Agent({ keepAlive: true, maxSockets: 16 });
const url = new URL(input.path, input.origin);
const run = `${process.pid}-${Date.now().toString(36)}`;
const latencies: number[] = [];
const ok: boolean[] = [];
const statuses: Record<string, number> = {};
let inFlight = 0;
let sent = 0;
let finished = false;

function done() {
  if (finished && inFlight === 0) {
    agent?.destroy();
    parentPort!.postMessage({ latencies, ok, statuses } satisfies ProbeOutput);
  }
}

type Idempotent = ProbeRequest & { key: string };

/** An idempotent request whose 2xx answer is in: a well-behaved client retries only once it has one. */
let replayable: Idempotent | undefined;

/** The request to send as number `n`: the next in turn, a new idempotent one, or the replay of the last answered one. */
function pick(n: number): ProbeRequest & { idempotent?: Idempotent } {
  const every = input.idempotencyEvery ?? 0;
  const plain = input.requests[n % input.requests.length]!;
  if (!every) return plain;
  if (n % every === 0) {
    const idempotent = { ...plain, key: `probe-${run}-${n}` };
    return { body: plain.body, headers: { ...plain.headers, 'idempotency-key': idempotent.key }, idempotent };
  }
  if (n % every === Math.floor(every / 2) && replayable) {
    const again = replayable;
    replayable = undefined;
    return { body: again.body, headers: { ...again.headers, 'idempotency-key': again.key } };
  }
  return plain;
}

function send() {
  const { headers, body, idempotent } = pick(sent++);
  inFlight++;
  const t0 = performance.now();
  let counted = false;
  const count = (status: string, answered: boolean) => {
    if (counted) return;
    counted = true;
    if (answered) {
      latencies.push(performance.now() - t0);
      ok.push(status.startsWith('2'));
      if (idempotent && status.startsWith('2')) replayable = idempotent;
    }
    statuses[status] = (statuses[status] ?? 0) + 1;
    inFlight--;
    done();
  };
  const req = http.request(
    url,
    {
      method: 'POST',
      agent: agent ?? false,
      localAddress: input.localAddress,
      timeout: input.timeoutMs ?? 30_000,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        ...(input.freshConnections ? { connection: 'close' } : {}),
      },
    },
    (res) => {
      res.resume();
      res.on('end', () => count(String(res.statusCode), true));
      res.on('error', () => count('error', false));
    },
  );
  req.on('timeout', () => {
    count('timeout', false);
    req.destroy();
  });
  req.on('error', () => count('error', false));
  req.end(body);
}

const timer = setInterval(send, 1000 / input.perSec);
setTimeout(() => {
  clearInterval(timer);
  finished = true;
  done();
}, input.durationMs);
