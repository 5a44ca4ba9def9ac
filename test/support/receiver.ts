import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { join } from 'node:path';

const TLS_DIR = join(import.meta.dirname, 'fixtures', 'tls');

/**
 * The test CA that signed `receiver.pem` (localhost, receiver.test, 127.0.0.1, ::1). vitest.config.ts puts it in
 * NODE_EXTRA_CA_CERTS before the workers start, exactly as an operator trusts a private receiver's CA; process tests
 * pass the same variable to the servers they spawn.
 */
export const TEST_CA_PATH = join(TLS_DIR, 'ca.pem');

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received: signatures are checked over these, never over re-serialised JSON. */
  rawBody: Buffer;
  at: number;
}

/** How the receiver answers one request; the default answers 200 `ok`. */
export type Responder = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

export interface Receiver {
  /** https://127.0.0.1:<port> (or https://[::1]:<port>), no trailing slash. */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** Replaces the responder for the requests that follow. */
  respond(responder: Responder): void;
  /** Resolves once `count` requests have arrived in total (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * A real HTTPS receiver on loopback with a certificate from the test CA (`untrusted: true` uses a self-signed one that
 * nothing trusts). It records every request's raw bytes and answers through a replaceable responder.
 */
export async function startReceiver(
  opts: { host?: '127.0.0.1' | '::1'; untrusted?: boolean; responder?: Responder } = {},
): Promise<Receiver> {
  const name = opts.untrusted ? 'untrusted' : 'receiver';
  const requests: ReceivedRequest[] = [];
  let responder: Responder =
    opts.responder ??
    ((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  const waiters = new Set<() => void>();

  const server: Server = createServer(
    { key: readFileSync(join(TLS_DIR, `${name}-key.pem`)), cert: readFileSync(join(TLS_DIR, `${name}.pem`)) },
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: ReceivedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          rawBody: Buffer.concat(chunks),
          at: Date.now(),
        };
        requests.push(received);
        for (const wake of waiters) wake();
        Promise.resolve(responder(received, res)).catch(() => res.destroy());
      });
    },
  );
  // Long enough that the sender reuses its sockets (Node's client keeps a socket only while the hint is over 1 s away),
  // as real receivers allow; close() ends them with closeAllConnections.
  server.keepAliveTimeout = 30_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    origin: host === '::1' ? `https://[::1]:${port}` : `https://127.0.0.1:${port}`,
    port,
    requests,
    respond: (r) => {
      responder = r;
    },
    waitFor: (count, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests.slice());
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`receiver got ${requests.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TcpListener {
  port: number;
  /** Connections accepted so far: how "no connection was made" is observed, not assumed. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A TCP listener on 127.0.0.1 that accepts and never speaks: a TLS handshake against it hangs until the sender gives
 * up, and its connection count shows whether a sender connected at all.
 */
export async function startSilentListener(): Promise<TcpListener> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createTcpServer((s) => {
    count++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
