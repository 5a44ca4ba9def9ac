/**
 * What the /v1 client tests share: a fetch that records what went over the wire (around the real fetch), and a real
 * local HTTP server in front of the real API that misbehaves on the requests a test picks, to show retries.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the client sent it and the answer it got (`status` 0 when no answer arrived). */
export interface Exchange {
  method: string;
  url: string;
  idempotencyKey: string | null;
  body: string | undefined;
  status: number;
  requestId: string | null;
  replayed: string | null;
  retryAfter: string | null;
}

/** The real fetch, recording every exchange and the most requests in flight at once. */
export function recordingFetch() {
  const exchanges: Exchange[] = [];
  let inFlight = 0;
  const stats = { maxInFlight: 0 };
  const wrapped: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const ex: Exchange = {
      method: init?.method ?? 'GET',
      url: input instanceof Request ? input.url : String(input),
      idempotencyKey: headers.get('idempotency-key'),
      body: typeof init?.body === 'string' ? init.body : undefined,
      status: 0,
      requestId: null,
      replayed: null,
      retryAfter: null,
    };
    exchanges.push(ex);
    stats.maxInFlight = Math.max(stats.maxInFlight, ++inFlight);
    try {
      const res = await fetch(input, init);
      ex.status = res.status;
      ex.requestId = res.headers.get('x-request-id');
      ex.replayed = res.headers.get('idempotent-replayed');
      ex.retryAfter = res.headers.get('retry-after');
      return res;
    } finally {
      inFlight--;
    }
  };
  return { fetch: wrapped, exchanges, stats };
}

/**
 * How the flaky server answers one request: `pass` forwards it to the API; `bad-gateway` answers 502 with an HTML page
 * as a load balancer would; `reset` drops the connection; `hang` never answers; `lose-answer` forwards it (so the API
 * applies it) and then never answers, as when a connection dies after the server did the work.
 */
export type Behaviour = 'pass' | 'bad-gateway' | 'reset' | 'hang' | 'lose-answer';

const FORWARDED = ['authorization', 'content-type', 'accept', 'idempotency-key', 'x-source'];
const RETURNED = ['content-type', 'x-request-id', 'retry-after', 'idempotent-replayed'];

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A real HTTP server on a random local port in front of `apiRoot` (…/api); `plan(n)` picks how request n (from 0) goes. */
export async function startFlakyServer(apiRoot: string, plan: (n: number) => Behaviour) {
  let n = 0;
  /** Idempotency-Key of every request the API itself received, in order. */
  const forwardedKeys: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const behaviour = plan(n++);
    void (async () => {
      const body = await readBody(req);
      if (behaviour === 'reset') return req.socket.destroy();
      if (behaviour === 'hang') return;
      if (behaviour === 'bad-gateway')
        return res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad gateway</body></html>');
      const headers: Record<string, string> = {};
      for (const name of FORWARDED) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      forwardedKeys.push(headers['idempotency-key']);
      const upstream = await fetch(apiRoot + req.url!.replace(/^\/api/, ''), {
        method: req.method,
        headers,
        ...(body.length ? { body: new Uint8Array(body) } : {}),
      });
      const text = await upstream.text();
      if (behaviour === 'lose-answer') return;
      const out: Record<string, string> = {};
      for (const name of RETURNED) {
        const v = upstream.headers.get(name);
        if (v !== null) out[name] = v;
      }
      res.writeHead(upstream.status, out).end(text);
    })().catch((err: unknown) => res.writeHead(599).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${origin}/api`,
    forwardedKeys,
    requests: () => n,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A local port that nothing listens on: connecting to it fails at once. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
