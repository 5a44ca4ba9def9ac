/**
 * The import pipeline: read items in file order, group rows into chunks of 100, send up to CONCURRENCY chunks at once,
 * and commit chunks strictly in order (failed rows written, checkpoint saved), so the checkpoint is one number and the
 * failed file is in line order. Reading waits while the queue is full: a file of any size streams in bounded memory.
 */
import type { CliContext } from '../context.ts';
import { CliError, cliErrorOf, ExitCode } from '../exit-codes.ts';
import { messages, progressBar } from '../output.ts';
import { type Checkpoint, saveCheckpoint } from './checkpoint.ts';
import type { FailedFile, FailedRow } from './failed.ts';
import { bodyOfCsv, bodyOfJson, mapHeaders, mapperOf, type Target } from './mapping.ts';
import type { Item } from './reader.ts';
import { validateContactRow } from './validate.ts';

/** Rows per request: the batch endpoint's maximum. */
export const CHUNK_ROWS = 100;
// Requests in flight: enough to hide the round trip, few enough to stay well under the 600 requests a minute per key
// with room for other clients of the same key (the client still honours 429 retry-after).
const CONCURRENCY = 4;

/** One row's outcome, as the /v1 client's batchUpsert reports it. */
export type RowResult = { ok: true; created: boolean } | { ok: false; error: { code: string; message: string } };

// Codes the client gives every row of a chunk whose request failed as a whole after its retries. Such a chunk is not
// a set of bad rows: the import stops there (exit 4) and a re-run resumes with it, rather than writing good rows to
// the failed file. (A whole-chunk 413 payload_too_large is not here: sending it again would fail again.)
const CHUNK_FAILURES = new Set([
  'network_error',
  'timeout',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'idempotency_in_progress',
  'unexpected_response',
]);

/** Sends one chunk; the key is the chunk's Idempotency-Key. */
export type SendChunk = (rows: Record<string, unknown>[], idempotencyKey: string) => Promise<RowResult[]>;

export interface Totals {
  created: number;
  updated: number;
  failed: number;
  /** Rows in chunks an earlier, interrupted run had already done. */
  skipped: number;
}

interface Chunk {
  index: number;
  rows: { line: number; body: Record<string, unknown>; values: string[] | Record<string, unknown> }[];
  failures: FailedRow[];
}

export interface RunResult {
  totals: Totals;
  /** interrupted: SIGINT; stopped: the file could not be read past a line (fatal parse error). */
  outcome: 'done' | 'interrupted' | 'stopped';
}

/** A dry run's outcome of one row: what the server would answer, as far as the server's data is not needed. */
function judge(body: Record<string, unknown>): RowResult {
  const problem = validateContactRow(body);
  return problem ? { ok: false, error: { code: problem.code, message: problem.message } } : { ok: true, created: true };
}

export async function runImport(opts: {
  ctx: CliContext;
  items: AsyncIterable<Item>;
  overrides: Map<string, Target>;
  source?: string | undefined;
  estimate: number;
  /** Absent for --dry-run: rows are mapped and checked by the server's rules, nothing is sent. */
  send?: SendChunk;
  failed?: FailedFile;
  checkpoint?: { path: string; state: Checkpoint };
  /** Dry run: where failures go instead of a file. */
  onDryRunFailure?: (row: FailedRow) => void;
}): Promise<RunResult> {
  const { ctx, send, failed, checkpoint } = opts;
  const say = messages(ctx);
  const totals: Totals = { created: 0, updated: 0, failed: 0, skipped: 0 };
  const progress = progressBar(ctx, { label: send ? 'import' : 'check', total: opts.estimate });
  const warned = new Set<string>();
  const onUnknown = (name: string) => {
    if (warned.has(name)) return;
    warned.add(name);
    say.warn(`column ${JSON.stringify(name)} matches no contact field and is ignored (use --map "${name}=field" to import it)`);
  };
  const mapper = mapperOf(opts.overrides, onUnknown);
  let targets: (Target | undefined)[] | undefined;
  const doneBefore = checkpoint?.state.doneChunks ?? 0;
  const queue: { chunk: Chunk; result: Promise<RowResult[] | { error: unknown }> }[] = [];
  let chunk: Chunk = { index: 0, rows: [], failures: [] };
  let outcome: RunResult['outcome'] = 'done';

  const withSource = (body: Record<string, unknown>) =>
    opts.source && body.source === undefined ? { ...body, source: opts.source } : body;

  const commit = async (c: Chunk, results: RowResult[] | undefined) => {
    const rows: FailedRow[] = [...c.failures];
    c.rows.forEach((row, i) => {
      const r = results?.[i];
      if (!r) return;
      if (r.ok) {
        if (r.created) totals.created++;
        else totals.updated++;
      } else {
        // The server's message already names each invalid field ("Validation failed: email: ...").
        rows.push({ line: row.line, code: r.error.code, message: r.error.message, values: row.values });
      }
    });
    rows.sort((a, b) => a.line - b.line);
    totals.failed += rows.length;
    if (!send) rows.forEach((r) => opts.onDryRunFailure?.(r));
    const failedBytes = failed ? await failed.append(rows) : 0;
    if (checkpoint) {
      checkpoint.state.failedBytes = failedBytes;
      checkpoint.state.failed += rows.length;
      checkpoint.state.doneChunks = c.index + 1;
      await saveCheckpoint(checkpoint.path, checkpoint.state);
    }
    progress.update({ done: totals.created + totals.updated + totals.failed + totals.skipped, failed: totals.failed });
  };

  // Waits for the oldest chunk in flight and commits it; a request that failed as a whole stops the import.
  const settleOldest = async () => {
    const { chunk: c, result } = queue.shift()!;
    const r = await result;
    const first = Array.isArray(r) ? r[0] : undefined;
    if (
      first &&
      !first.ok &&
      CHUNK_FAILURES.has(first.error.code) &&
      (r as RowResult[]).every((x) => !x.ok && x.error.code === first.error.code)
    ) {
      await Promise.allSettled(queue.splice(0).map((q) => q.result));
      throw new CliError(
        ExitCode.server,
        `the server did not take the rows from line ${c.rows[0]!.line} on, after retries (${first.error.code}: ${first.error.message})`,
      );
    }
    if (!Array.isArray(r)) {
      // Later chunks may have succeeded, but the checkpoint only moves past contiguous chunks: a resume sends them
      // again with the same Idempotency-Keys and gets the stored answers.
      await Promise.allSettled(queue.splice(0).map((q) => q.result));
      throw cliErrorOf(r.error, 'public');
    }
    await commit(c, r);
  };

  const dispatch = async (c: Chunk) => {
    if (c.index < doneBefore) {
      totals.skipped += c.rows.length;
      return;
    }
    if (!send) {
      // The dry run: each row judged by the server's rules (validate.ts); a row that passes counts as one to send.
      await commit(
        c,
        c.rows.map((r) => judge(withSource(r.body))),
      );
      return;
    }
    if (c.rows.length === 0) {
      await commit(c, undefined);
      return;
    }
    const key = `leadwire-import-${checkpoint?.state.runId ?? 'once'}-${c.index}`;
    const result = send(
      c.rows.map((r) => withSource(r.body)),
      key,
    ).catch((error: unknown) => ({ error }));
    queue.push({ chunk: c, result });
    while (queue.length >= CONCURRENCY) await settleOldest();
  };

  try {
    for await (const item of opts.items) {
      if (ctx.signal.aborted) {
        outcome = 'interrupted';
        break;
      }
      if (item.kind === 'header') {
        targets = mapHeaders(item.headers, opts.overrides, onUnknown);
        failed?.setHeaders(item.headers);
        continue;
      }
      if (item.kind === 'error') {
        chunk.failures.push({ line: item.line, code: item.code, message: item.message, raw: item.raw });
        if (item.fatal) {
          outcome = 'stopped';
          say.error(`line ${item.line}: ${item.message}`);
          break;
        }
        continue;
      }
      const body = Array.isArray(item.values) ? bodyOfCsv(item.values, targets ?? []) : bodyOfJson(item.values, mapper);
      if (!body) continue;
      chunk.rows.push({ line: item.line, body, values: item.values });
      if (chunk.rows.length === CHUNK_ROWS) {
        await dispatch(chunk);
        chunk = { index: chunk.index + 1, rows: [], failures: [] };
      }
    }
    // A partial chunk cut by an interruption is not sent: the resume reads it again from the file.
    if (outcome !== 'interrupted' && (chunk.rows.length > 0 || chunk.failures.length > 0)) await dispatch(chunk);
    while (queue.length > 0) await settleOldest();
  } finally {
    await Promise.allSettled(queue.map((q) => q.result));
    await failed?.close();
  }
  progress.finish({ done: totals.created + totals.updated + totals.failed + totals.skipped, failed: totals.failed });
  return { totals, outcome };
}
