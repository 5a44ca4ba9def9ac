/** Posting one streamed delivery to the local receiver, exactly as the server would have sent it. */

export interface StreamedDelivery {
  /** The event's id (the `id:` of the SSE frame; also its `webhook-id`). */
  id: string;
  event: string;
  headers: Record<string, string>;
  /** The exact body; posted as its UTF-8 bytes, as the server sends it. */
  body: string;
}

export interface Forwarded {
  status: number | null;
  durationMs: number;
  error: string | null;
}

/** The same limit the server gives a receiver. */
export const RECEIVER_TIMEOUT_MS = 10_000;

/** Posts the delivery; a receiver that is down or slow is reported in the result, never thrown. */
export async function forward(fetchFn: typeof fetch, url: string, d: StreamedDelivery, signal: AbortSignal): Promise<Forwarded> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await fetchFn(url, {
      method: 'POST',
      headers: d.headers,
      body: d.body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(RECEIVER_TIMEOUT_MS)]),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, durationMs: took(), error: null };
  } catch (err) {
    return { status: null, durationMs: took(), error: reasonOf(err) };
  }
}

/** `connect ECONNREFUSED 127.0.0.1:4000` rather than fetch's bare "fetch failed". */
function reasonOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${RECEIVER_TIMEOUT_MS / 1000} s`;
  if (e?.name === 'AbortError') return 'interrupted';
  return e?.cause?.message ?? e?.cause?.code ?? e?.message ?? String(err);
}

/** The id of the record the event is about: the first object in `data` that has one (contact, deal, submission…). */
export function recordIdOf(body: string): string {
  try {
    const data = (JSON.parse(body) as { data?: Record<string, unknown> }).data ?? {};
    for (const value of Object.values(data)) {
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === 'string') return id;
    }
  } catch {
    // not JSON: nothing to show
  }
  return '-';
}
