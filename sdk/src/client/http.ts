/**
 * One call of the /v1 API with its retries. Plain code on purpose: the client and webhook verification together must
 * stay under 5 KB gzipped, so there is no request framework, only the few things every call needs.
 */
import { LeadwireError } from './errors.ts';
import type { Issue, Permission } from './types.ts';

/**
 * The client's defaults; sdk/README.md documents them in a table that a test compares with this object.
 * - `maxRetries`: retries after the first attempt, so at most 3 attempts.
 * - `timeoutMs`: per attempt, until the whole answer is read; a batch of 100 rows takes well under a second normally.
 * - `backoffBaseMs`, `backoffMaxMs`: the delay before retry n (from 0) is random in [0, min(max, base * 2^n)) ("full
 *   jitter"), so many clients failing together do not come back together.
 * - `batchSize`: rows per batch-upsert request, the server's maximum.
 * - `concurrency`: batch-upsert requests in flight at once; 4 keeps a single import well inside 600 requests/minute
 *   while the server works on several chunks.
 * - `pageSize`: records or events per request of a listing, the server's maximum: a sync makes the fewest requests.
 */
export const DEFAULTS = {
  maxRetries: 2,
  timeoutMs: 30_000,
  backoffBaseMs: 500,
  backoffMaxMs: 8_000,
  batchSize: 100,
  concurrency: 4,
  pageSize: 100,
} as const;

/** What every call needs to know, fixed when the client is created. */
export interface Transport {
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
  maxRetries: number;
  timeoutMs: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Options of one call. */
export interface CallOptions {
  /**
   * The `Idempotency-Key` of a write (1-255 printable ASCII characters). Default: a new random UUID per call. The same
   * key is sent on every retry of the call, so the server applies the write at most once; pass your own to make a
   * retry of the whole call (e.g. after a crash) safe as well.
   */
  idempotencyKey?: string;
  /** Aborts the call, its retries included; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts: a minute's retry-after must not hold up Ctrl-C. */
export const wait = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });

/** The delay before retry `attempt` (0 for the first retry): exponential backoff with full jitter. */
export const backoffMs = (attempt: number): number =>
  Math.random() * Math.min(DEFAULTS.backoffMaxMs, DEFAULTS.backoffBaseMs * 2 ** attempt);

function retryAfterSeconds(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * Whether the same request may succeed later: no answer, 429, 5xx, or 409 `idempotency_in_progress` (an earlier
 * attempt of this very call, e.g. one that timed out here, is still running there; once it commits its answer is
 * replayed). Other 4xx would fail the same way again.
 */
const retryable = (err: LeadwireError): boolean =>
  err.status === 0 || err.status === 429 || err.status >= 500 || err.code === 'idempotency_in_progress';

/**
 * Sends one request, retrying answers that may succeed later (see `retryable`) up to `maxRetries` times.
 * Only POST writes, and every one of them carries an Idempotency-Key set once here, so a retry never applies a write
 * twice. Other 4xx are never retried: the same request would fail the same way.
 */
export async function send<T>(t: Transport, method: 'GET' | 'POST', path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${t.apiKey}`, accept: 'application/json' };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = opts.idempotencyKey ?? crypto.randomUUID();
  }
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  for (let attempt = 0; ; attempt++) {
    try {
      return await attemptOnce<T>(t, t.baseUrl + path, init, opts.signal);
    } catch (err) {
      if (!(err instanceof LeadwireError) || !retryable(err) || attempt >= t.maxRetries) throw err;
      await t.sleep(err.retryAfter !== undefined ? err.retryAfter * 1000 : backoffMs(attempt), opts.signal);
    }
  }
}

async function attemptOnce<T>(t: Transport, url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<T> {
  signal?.throwIfAborted();
  const ctrl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort();
  }, t.timeoutMs);
  const onAbort = () => ctrl.abort();
  signal?.addEventListener('abort', onAbort);
  let res: Response;
  let text: string;
  try {
    res = await t.fetch(url, { ...init, signal: ctrl.signal });
    text = await res.text();
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    throw new LeadwireError(
      timedOut
        ? { status: 0, code: 'timeout', message: `No answer from ${url} within ${t.timeoutMs} ms`, cause }
        : { status: 0, code: 'network_error', message: `Could not reach ${url}: ${(cause as Error).message}`, cause },
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }

  // The fields of an API error body; a success body is handed over as it is.
  let json: { code?: unknown; error?: unknown; required?: Permission; issues?: Issue[] } | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: told apart below
  }
  if (res.ok && json !== undefined) return json as T;
  throw new LeadwireError({
    status: res.status,
    code: typeof json?.code === 'string' ? json.code : 'unexpected_response',
    message:
      typeof json?.error === 'string'
        ? json.error
        : `Unexpected ${res.status} answer from ${url} (is baseUrl the API root, ending in /api?)`,
    required: json?.required,
    issues: json?.issues,
    retryAfter: retryAfterSeconds(res.headers.get('retry-after')),
    requestId: res.headers.get('x-request-id') ?? undefined,
  });
}
