import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { checkUrlAddress } from './address.ts';
import type { Resolver } from './resolver.ts';

export interface SendResult {
  outcome: 'succeeded' | 'failed' | 'blocked';
  statusCode: number | null;
  responseBody: string | null;
  /** The answer's headers in order (at most RESPONSE_HEADERS, values cut at HEADER_CHARS); null without an answer. */
  responseHeaders: [string, string][] | null;
  /** The headers as sent (with Host and Content-Length); null when no request was made (refused, unparseable URL). */
  requestHeaders: Record<string, string> | null;
  durationMs: number;
  error: string | null;
}

/** What the delivery log keeps of an answer's headers: enough to debug a receiver, bounded whatever it sends. */
const RESPONSE_HEADERS = 50;
const HEADER_CHARS = 512;

function keptHeaders(raw: string[]): [string, string][] {
  const kept: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length && kept.length < RESPONSE_HEADERS; i += 2) {
    kept.push([raw[i]!.slice(0, 100).replaceAll('\0', ''), raw[i + 1]!.slice(0, HEADER_CHARS).replaceAll('\0', '\uFFFD')]);
  }
  return kept;
}

/** The spec's "any 2xx within 10 seconds". */
const DEFAULT_TIMEOUT_MS = 10_000;
/** The delivery log keeps the start of the response: this many characters (code points). */
const BODY_CHARS = 1_024;
/** Bytes read to be sure of BODY_CHARS characters whatever their UTF-8 width (4 bytes at most, plus a split one). */
const BODY_BYTES = BODY_CHARS * 4 + 4;
/**
 * Past the kept start, up to this many bytes are read and dropped so that the socket can go back to the pool; a longer
 * (or endless) body costs the socket instead of memory or time.
 */
const DRAIN_BYTES = 64 * 1024;

/**
 * One keep-alive pool per process: reusing TLS sessions and sockets is what makes 1,000 deliveries/s possible. Every
 * request names the CHECKED address as its `host` (the URL's host goes into `servername` and the Host header), and
 * the pool key is built from host, port and servername, so a pooled socket is only ever reused for the very address
 * that the current attempt's check allowed. Idle sockets close after 30 s.
 */
const agent = new Agent({ keepAlive: true, timeout: 30_000, scheduling: 'lifo' });

const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/** What the delivery log shows for a failed connection: short, no stack, never a header (so never a secret). */
function describeError(err: NodeJS.ErrnoException, target: string): string {
  const code = err.code ?? '';
  if (TLS_TRUST_CODES.has(code)) return `TLS: the receiver's certificate is not trusted (${code}: ${err.message})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the certificate does not match the host name (${err.message})`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `TLS: the certificate is not valid now (${code})`;
  if (code === 'ECONNREFUSED') return `connection refused by ${target}`;
  if (code === 'ECONNRESET') return `connection reset by ${target}`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `${target} is unreachable (${code})`;
  return code ? `${err.message} (${code})` : err.message;
}

/** Postgres text cannot hold NUL; the log shows it as U+FFFD. Cut at BODY_CHARS code points, not UTF-16 units. */
function keptBody(text: string): string {
  return Array.from(text.slice(0, BODY_CHARS * 2))
    .slice(0, BODY_CHARS)
    .join('')
    .replaceAll('\0', '\uFFFD');
}

/**
 * POSTs one signed delivery. The URL's host is resolved ONCE and every answer checked (checkUrlAddress); the
 * connection goes to that checked address, with the certificate verified against the URL's host name. An unsafe
 * address is `blocked` without any connection. One deadline covers resolution, connect, TLS, the answer's head and
 * the kept part of its body. Never throws: every problem is a result the delivery log can show.
 */
export async function sendWebhook(
  input: { url: string; body: string; headers: Record<string, string> },
  opts: { resolver: Resolver; allowLoopback: boolean; timeoutMs?: number; now?: () => number },
): Promise<SendResult> {
  const now = opts.now ?? (() => performance.now());
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const started = now();
  const deadline = Date.now() + timeoutMs;
  const timedOut = (phase: string) => `timed out after ${timeoutMs / 1000} s ${phase}`;
  let requestHeaders: Record<string, string> | null = null;
  let responseHeaders: [string, string][] | null = null;
  const result = (
    outcome: SendResult['outcome'],
    statusCode: number | null,
    responseBody: string | null,
    error: string | null,
  ): SendResult => ({
    outcome,
    statusCode,
    responseBody,
    responseHeaders,
    requestHeaders,
    durationMs: Math.max(0, Math.round(now() - started)),
    error,
  });

  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return result('blocked', null, null, 'the URL cannot be parsed');
  }
  if (url.protocol !== 'https:')
    return result('blocked', null, null, `only https URLs are delivered to (this one is ${url.protocol.slice(0, -1)})`);

  // The resolver shares the deadline: a hanging DNS server must not hold a worker longer than a slow receiver could.
  let resolveTimer: NodeJS.Timeout | undefined;
  const resolver: Resolver = (host) =>
    Promise.race([
      opts.resolver(host),
      new Promise<never>((_resolve, reject) => {
        resolveTimer = setTimeout(
          () => reject(Object.assign(new Error('timed out'), { code: 'ETIMEOUT' })),
          Math.max(0, deadline - Date.now()),
        );
      }),
    ]);
  const check = await checkUrlAddress(input.url, { resolver, allowLoopback: opts.allowLoopback }).finally(() => clearTimeout(resolveTimer));
  if (!check.ok) {
    // Only an address that is unsafe disables the endpoint; a host that does not resolve right now is retried.
    if (check.kind === 'unresolved')
      return result(
        'failed',
        null,
        null,
        check.reason.includes('ETIMEOUT') ? `${timedOut('resolving the host name')}: ${check.reason}` : check.reason,
      );
    return result('blocked', null, null, check.reason);
  }

  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port ? Number(url.port) : 443;
  const target = `${check.address.includes(':') ? `[${check.address}]` : check.address}:${port}`;

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const settle = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };

    requestHeaders = { ...input.headers, host: url.host, 'content-length': String(Buffer.byteLength(input.body)) };
    const req = request({
      agent,
      method: 'POST',
      host: check.address,
      port,
      path: url.pathname + url.search,
      // SNI and certificate checks use the URL's host name; an IP literal URL is verified against the IP (no SNI).
      servername: isIP(hostname) ? '' : hostname,
      headers: requestHeaders,
    });

    const timer = setTimeout(
      () => {
        settle(
          result('failed', statusCode, null, timedOut(statusCode === null ? 'waiting for the response' : 'reading the response body')),
        );
        req.destroy();
      },
      Math.max(0, deadline - Date.now()),
    );

    req.on('error', (err: NodeJS.ErrnoException) => settle(result('failed', statusCode, null, describeError(err, target))));

    req.on('response', (res: IncomingMessage) => {
      statusCode = res.statusCode ?? null;
      responseHeaders = keptHeaders(res.rawHeaders);
      const decoder = new StringDecoder('utf8');
      let text = '';
      let read = 0;
      const finish = (complete: boolean) => {
        if (complete) text += decoder.end();
        const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
        settle(result(ok ? 'succeeded' : 'failed', statusCode, keptBody(text), ok ? null : `the receiver answered ${statusCode}`));
      };
      res.on('data', (chunk: Buffer) => {
        if (read < BODY_BYTES) text += decoder.write(chunk.subarray(0, BODY_BYTES - read));
        read += chunk.length;
        if (read > BODY_BYTES + DRAIN_BYTES) {
          finish(false);
          res.destroy();
        }
      });
      res.on('end', () => finish(read <= BODY_BYTES));
      res.on('error', (err: NodeJS.ErrnoException) => settle(result('failed', statusCode, keptBody(text), describeError(err, target))));
    });

    req.end(input.body);
  });
}
