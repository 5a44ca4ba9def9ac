/**
 * The well-behaved tenant, on a thread of its own so that its latencies are not delayed by the load generator's event
 * loop: `keys.length` keys, each sending `perKeyPerSec` upserts of an existing contact (well under 600 a minute), open
 * loop (a slow answer does not delay the next request). Posts `{ latencies, statuses }` when `durationMs` is over and
 * the last answer is in.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

export interface ProbeInput {
  origin: string;
  keys: string[];
  perKeyPerSec: number;
  durationMs: number;
  /** One request body per send, cycled. */
  bodies: string[];
}

export interface ProbeOutput {
  latencies: number[];
  statuses: Record<string, number>;
}

const input = workerData as ProbeInput;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const url = new URL('/api/v1/contacts/upsert', input.origin);
const latencies: number[] = [];
const statuses: Record<string, number> = {};
let inFlight = 0;
let sent = 0;
let finished = false;

function done() {
  if (finished && inFlight === 0) {
    agent.destroy();
    parentPort!.postMessage({ latencies, statuses } satisfies ProbeOutput);
  }
}

function send() {
  const key = input.keys[sent % input.keys.length]!;
  const body = input.bodies[sent % input.bodies.length]!;
  sent++;
  inFlight++;
  const t0 = performance.now();
  const count = (status: string) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    inFlight--;
    done();
  };
  const req = http.request(
    url,
    { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
    (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(performance.now() - t0);
        count(String(res.statusCode));
      });
    },
  );
  req.on('error', () => count('error'));
  req.end(body);
}

const interval = 1000 / (input.perKeyPerSec * input.keys.length);
const timer = setInterval(send, interval);
setTimeout(() => {
  clearInterval(timer);
  finished = true;
  done();
}, input.durationMs);
