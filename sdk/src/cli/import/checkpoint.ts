/**
 * Resuming an import: a checkpoint file next to the input records the chunks done, keyed by the file's size and
 * SHA-256 and by the options that shape the requests, so a changed file or mapping starts over instead of skipping rows.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { writeFileAtomic } from '../config.ts';
import { CliError, ExitCode } from '../exit-codes.ts';

export interface Checkpoint {
  version: 1;
  /** `<size>:<sha256>` of the input. */
  file: string;
  /** SHA-256 of the options that change what is sent (format, --map, --source). */
  options: string;
  /** Part of every Idempotency-Key: the same across resumes of this import, new for the next import of the file. */
  runId: string;
  /** Chunks 0 .. doneChunks-1 are done, and their failed rows written. */
  doneChunks: number;
  failedPath: string;
  /** The failed file's length after the last chunk done: a resume cuts anything written after it. */
  failedBytes: number;
  /** Rows that failed in the chunks done, for the exit code of a resumed import. */
  failed: number;
}

export function checkpointPathOf(input: string): string {
  return `${input}.leadwire-import.json`;
}

export interface Fingerprint {
  id: string;
  size: number;
  /** Newline count: the progress bar's estimate of the rows to come. */
  lines: number;
}

/**
 * Size, SHA-256 and line count in one streaming pass, which also checks the file is UTF-8: a Latin-1 file read as
 * UTF-8 would turn every accent into U+FFFD and store that silently.
 */
export async function fingerprintOf(path: string, signal?: AbortSignal): Promise<Fingerprint> {
  const hash = createHash('sha256');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let size = 0;
  let lines = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    // Hashing a large file takes seconds: Ctrl-C should not have to wait for it.
    if (signal?.aborted) throw new CliError(ExitCode.interrupted, 'interrupted before the import started');
    hash.update(chunk);
    try {
      decoder.decode(chunk, { stream: true });
    } catch (err) {
      throw new CliError(
        ExitCode.usage,
        `${path} is not UTF-8 text (invalid bytes within the first ${size + chunk.length} bytes): save it as UTF-8 and try again`,
        { cause: err },
      );
    }
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    size += chunk.length;
    last = chunk[chunk.length - 1]!;
  }
  if (last !== 10) lines++;
  return { id: `${size}:${hash.digest('hex')}`, size, lines };
}

export function optionsHashOf(options: unknown): string {
  return createHash('sha256').update(JSON.stringify(options)).digest('hex');
}

/** The checkpoint for this file and these options, or why there is none to resume. */
export async function loadCheckpoint(path: string, file: string, options: string): Promise<{ checkpoint?: Checkpoint; ignored?: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  let cp: Checkpoint;
  try {
    cp = JSON.parse(text) as Checkpoint;
  } catch {
    return { ignored: `${path} is not valid JSON` };
  }
  if (cp.version !== 1 || typeof cp.doneChunks !== 'number' || typeof cp.runId !== 'string')
    return { ignored: `${path} is not a checkpoint of this version` };
  if (cp.file !== file) return { ignored: 'the file changed since the interrupted import' };
  if (cp.options !== options) return { ignored: 'the options (--map, --source) differ from the interrupted import' };
  return { checkpoint: cp };
}

export function newCheckpoint(file: string, options: string, failedPath: string): Checkpoint {
  return { version: 1, file, options, runId: randomUUID(), doneChunks: 0, failedPath, failedBytes: 0, failed: 0 };
}

export async function saveCheckpoint(path: string, cp: Checkpoint): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(cp)}\n`);
}

export async function removeCheckpoint(path: string): Promise<void> {
  await rm(path, { force: true });
}
