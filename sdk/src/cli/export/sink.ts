/**
 * Where an export's text goes, written with backpressure so that only the page being written is held in memory: the
 * command's stdout, or a file that appears only once complete (written under a temporary name in the same folder,
 * flushed, then renamed; removed instead when the export fails or is interrupted).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import type { CliContext } from '../context.ts';

export interface Sink {
  /** Resolves once the text is handed over and the destination can take more. */
  write(text: string): Promise<void>;
  /** Completes the output (a file is renamed into place). */
  close(): Promise<void>;
  /** Gives up: a file being written is removed. */
  abort(): Promise<void>;
}

type Writable = CliContext['stdout'] & {
  once?: (event: 'drain', listener: () => void) => unknown;
  on?: (event: 'error', listener: (err: Error) => void) => unknown;
};

/** Thrown by a write once the reader of stdout went away (`| head`): the export stops there, quietly. */
export class OutputClosed extends Error {}

/**
 * The command's stdout: waits for 'drain' when it is a stream that says it is full; once its reader has gone (EPIPE,
 * as after `| head`), further writes throw {@link OutputClosed} instead of crashing on the stream's 'error'.
 */
export function stdoutSink(out: Writable): Sink {
  let closed: Error | undefined;
  let wake = () => {};
  out.on?.('error', (err) => {
    closed = err;
    wake();
  });
  const check = () => {
    if (closed) throw new OutputClosed(closed.message);
  };
  return {
    write: async (text) => {
      check();
      if (out.write(text) !== false || typeof out.once !== 'function') return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        out.once!('drain', resolve);
      });
      check();
    },
    close: async () => undefined,
    abort: async () => undefined,
  };
}

/**
 * A file at `path`, created with mode 0600 (contacts are personal data). Opening fails at once, before anything is
 * fetched, when the folder is missing or not writable.
 */
export async function fileSink(path: string): Promise<Sink> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.partial`);
  const stream = createWriteStream(tmp, { flags: 'wx', mode: 0o600 });
  let failure: Error | undefined;
  stream.on('error', (err) => (failure = err));
  // Rejects with the stream's error (a missing folder, no permission): events.once rejects on 'error'.
  await once(stream, 'open');
  return {
    write: async (text) => {
      if (failure) throw failure;
      if (!stream.write(text)) await once(stream, 'drain');
    },
    close: async () => {
      if (failure) throw failure;
      await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
      await rename(tmp, path);
    },
    abort: async () => {
      stream.destroy();
      await rm(tmp, { force: true });
    },
  };
}
