import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SNIFF_BYTES } from './sniff.ts';

export interface Spooled {
  path: string;
  size: number;
  sha256: string;
  /** The first bytes, for type sniffing. */
  head: Buffer;
  /** Deletes the spooled bytes; safe to call twice. */
  discard(): Promise<void>;
}

export interface SpoolOptions {
  dir: string;
  maxBytes: number;
  /** Thrown as soon as the stream passes maxBytes, so an over-size upload is cut off there rather than read to its end. */
  tooLarge: () => Error;
  /** Sees the first bytes once they are in (or the whole file when it is shorter); throwing stops the upload there. */
  inspectHead?: (head: Buffer) => void;
}

/**
 * Copies an upload to a private temporary file while counting, hashing and looking at its first bytes, so it can be
 * scanned before anything is stored. Memory stays at one chunk whatever the size; on any failure the file is removed.
 */
export async function spool(source: Readable, opts: SpoolOptions): Promise<Spooled> {
  await mkdir(opts.dir, { recursive: true, mode: 0o700 });
  const path = join(opts.dir, `${randomUUID()}.upload`);
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  let inspected = false;
  const inspect = () => {
    inspected = true;
    opts.inspectHead?.(head);
  };
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > opts.maxBytes) return done(opts.tooLarge());
      if (!inspected) {
        head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        try {
          if (head.length >= SNIFF_BYTES) inspect();
        } catch (err) {
          return done(err as Error);
        }
      }
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      try {
        if (!inspected) inspect();
        done();
      } catch (err) {
        done(err as Error);
      }
    },
  });
  const discard = () => rm(path, { force: true });
  try {
    await pipeline(source, meter, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  } catch (err) {
    await discard();
    throw err;
  }
  return { path, size, sha256: hash.digest('hex'), head, discard };
}
