import { connect } from 'node:net';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.ts';
import { type ScanResult, type Scanner, ScannerError } from './scanner.ts';

/** The null-terminated form of the command: clamd then ends its reply with a NUL too. */
const INSTREAM = Buffer.from('zINSTREAM\0', 'latin1');
const END_OF_STREAM = Buffer.alloc(4);
/** Well under clamd's StreamMaxLength; the chunk size only bounds memory and framing overhead. */
const DEFAULT_CHUNK_BYTES = 64 * 1024;
/** A verdict is one short line; anything longer is not clamd talking. */
const MAX_REPLY_BYTES = 4096;

/**
 * clamd's INSTREAM framing: the command, then each chunk as a 4-byte big-endian length and its bytes, then a zero
 * length to mark the end.
 */
export function instreamFramer(chunkBytes = DEFAULT_CHUNK_BYTES): Transform {
  const framer = new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (let at = 0; at < chunk.length; at += chunkBytes) {
        const piece = chunk.subarray(at, at + chunkBytes);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(piece.length);
        this.push(Buffer.concat([length, piece]));
      }
      done();
    },
    flush(done) {
      done(null, END_OF_STREAM);
    },
  });
  framer.push(INSTREAM);
  return framer;
}

/** `stream: OK` is clean, `stream: <signature> FOUND` infected; anything else (`... ERROR`) is no verdict at all. */
export function parseClamdReply(raw: string): ScanResult {
  const reply = raw
    .replace(/\0/g, '')
    .trim()
    .replace(/^\d+: /, '');
  if (reply === 'stream: OK') return { clean: true };
  const found = /^stream: (.+) FOUND$/.exec(reply);
  if (found?.[1]) return { clean: false, signature: found[1] };
  throw new ScannerError(`clamd gave no verdict: ${reply.slice(0, 200) || '(empty reply)'}`);
}

export interface ClamdOptions {
  host: string;
  port: number;
  /** Idle budget: clamd sending or reading nothing for this long fails the scan. */
  timeoutMs?: number;
  chunkBytes?: number;
}

/** Scans through clamd's INSTREAM command over TCP, one connection per scan. */
export class ClamdScanner implements Scanner {
  readonly opts: ClamdOptions;
  constructor(opts: ClamdOptions) {
    this.opts = opts;
  }

  async scan(data: Readable): Promise<ScanResult> {
    const socket = connect({ host: this.opts.host, port: this.opts.port });
    let reply = Buffer.alloc(0);
    let failure: unknown;
    const answered = new Promise<void>((resolve) => {
      socket.on('data', (b: Buffer) => {
        if (reply.length < MAX_REPLY_BYTES) reply = Buffer.concat([reply, b]);
        if (reply.includes(0) || reply.length >= MAX_REPLY_BYTES) {
          resolve();
          socket.destroy();
        }
      });
      socket.on('close', () => resolve());
    });
    // Errors after the write side is done (a reset while we wait for the verdict) land here, not as a crash.
    socket.on('error', (err) => (failure ??= err));
    socket.setTimeout(this.opts.timeoutMs ?? 30_000, () => socket.destroy(new ScannerError('clamd timed out')));

    try {
      await pipeline(data, instreamFramer(this.opts.chunkBytes), socket, { end: false });
    } catch (err) {
      // clamd may refuse mid-stream (size limit) and hang up; its reply, if any, says why.
      failure ??= err;
    }
    await answered;
    socket.destroy();
    if (reply.length > 0) return parseClamdReply(reply.toString('utf8'));
    throw new ScannerError('clamd closed the connection without a verdict', failure);
  }
}

/** The configured scanner, or null when none is (contact files are then refused; see config CLAMAV_HOST). */
export function scannerFor(config: Config): Scanner | null {
  if (!config.CLAMAV_HOST) return null;
  return new ClamdScanner({ host: config.CLAMAV_HOST, port: config.CLAMAV_PORT, timeoutMs: config.CLAMAV_TIMEOUT_MS });
}
