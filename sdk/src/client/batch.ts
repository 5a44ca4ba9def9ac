import pLimit from 'p-limit';
import { LeadwireError } from './errors.ts';
import { type CallOptions, DEFAULTS, send, type Transport } from './http.ts';
import type { BatchResponse, BatchRowResult, ContactUpsertInput } from './types.ts';

/** Progress of a `batchUpsert`, reported after each chunk. */
export interface BatchProgress {
  /** Rows with a result so far. */
  done: number;
  /** Rows given. */
  total: number;
  /** Rows among `done` that were not saved. */
  failed: number;
  /** The chunk just finished: rows `chunkIndex * 100` to `chunkIndex * 100 + 99`. */
  chunkIndex: number;
  /** That chunk's results, in row order, so that failures can be written out as they come. */
  results: BatchRowResult[];
}

/** Options of `contacts.batchUpsert`. */
export interface BatchUpsertOptions {
  /** Called after each chunk of 100 rows, in the order chunks finish. */
  onProgress?: (progress: BatchProgress) => void;
  /** Chunks in flight at once. Default `DEFAULTS.concurrency` (4). */
  concurrency?: number;
  /**
   * The Idempotency-Key of each chunk. Default: a random one per chunk, reused across that chunk's retries. Make it
   * deterministic (e.g. from a file's hash and the chunk index) to make a whole run safe to repeat after an
   * interruption: chunks already done are replayed by the server instead of being applied again.
   */
  idempotencyKeyOf?: (chunkIndex: number) => string;
  /** Aborts the batch: no new chunk starts, calls in flight are aborted, and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Upserts any number of contacts through POST /v1/contacts/batch-upsert, 100 rows a request, a few requests at once.
 * Each chunk is retried like any write. A chunk that still fails as a whole gives each of its rows `{ ok: false }` with
 * the chunk's error (`network_error`, `timeout`, `rate_limited`, `internal_error`, `payload_too_large`, ...) and the
 * other chunks go on; 401 and 403 reject the whole call instead, since no other chunk could succeed.
 */
export async function batchUpsert(
  t: Transport,
  rows: readonly ContactUpsertInput[],
  opts: BatchUpsertOptions = {},
): Promise<BatchRowResult[]> {
  const size = DEFAULTS.batchSize;
  const chunks = Math.ceil(rows.length / size);
  const results: BatchRowResult[] = new Array<BatchRowResult>(rows.length);
  let done = 0;
  let failed = 0;

  const runChunk = async (chunkIndex: number) => {
    const start = chunkIndex * size;
    const slice = rows.slice(start, start + size);
    const call: CallOptions = { signal: opts.signal };
    if (opts.idempotencyKeyOf) call.idempotencyKey = opts.idempotencyKeyOf(chunkIndex);
    let chunk: BatchRowResult[];
    try {
      const res = await send<BatchResponse>(t, 'POST', '/v1/contacts/batch-upsert', { contacts: slice }, call);
      // The server numbers rows within the request; the caller's numbering is across all rows.
      chunk = res.results.map((r): BatchRowResult => {
        const index = start + r.index;
        if (r.ok) return { ...r, index };
        const { code, error: message, issues } = r.error;
        return { index, ok: false, error: issues ? { code, message, issues } : { code, message } };
      });
    } catch (err) {
      if (!(err instanceof LeadwireError) || err.status === 401 || err.status === 403) throw err;
      const error = err.issues ? { code: err.code, message: err.message, issues: err.issues } : { code: err.code, message: err.message };
      chunk = slice.map((_, i) => ({ index: start + i, ok: false, error }));
    }
    for (const r of chunk) {
      results[r.index] = r;
      if (!r.ok) failed++;
    }
    done += chunk.length;
    opts.onProgress?.({ done, total: rows.length, failed, chunkIndex, results: chunk });
  };

  // Chunks start in order, `concurrency` at a time. An error that ends the call (401/403, an abort) leaves the chunks
  // not yet started unstarted; the ones in flight finish or abort with the signal.
  const limit = pLimit(Math.max(1, Math.floor(opts.concurrency || DEFAULTS.concurrency)));
  await limit.map(
    Array.from({ length: chunks }, (_, i) => i),
    async (chunkIndex) => {
      try {
        await runChunk(chunkIndex);
      } catch (err) {
        limit.clearQueue();
        throw err;
      }
    },
  );
  return results;
}
