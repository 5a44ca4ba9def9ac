/**
 * The body of one password-hashing thread (see hash-workers.ts). Self-contained on purpose: it runs as a worker
 * thread's entry file, loaded by Node itself (type stripping) in the server and under vitest alike.
 *
 * It lowers its own scheduling priority first, so that the kernel gives a hash only the CPU that the event loop and
 * PostgreSQL leave: on Linux a thread is a task of its own, and setpriority() on its id (from /proc/thread-self)
 * renices that thread alone. Then it computes one scrypt at a time, synchronously, on this thread (the asynchronous
 * scrypt would run on libuv's shared pool, at the process's priority).
 */
import { scryptSync } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';

/** The lowest priority (nice 19): a hash waits whenever anything else of the machine wants the core. */
const NICE = 19;

export interface HashRequest {
  id: number;
  password: string;
  salt: Uint8Array;
  keyLength: number;
  params: { N: number; r: number; p: number; maxmem: number };
}

export type HashReply = { id: number; hash: Uint8Array } | { id: number; error: string };

/** What the thread tells its owner first: its kernel task id and the nice value it runs at (null where unknown). */
export interface ThreadReady {
  ready: true;
  tid: number | null;
  nice: number | null;
}

function lowerPriority(): ThreadReady {
  let tid: number | null = null;
  try {
    // "<pid>/task/<tid>" on Linux; elsewhere there is no per-thread priority to set.
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    os.setPriority(tid, NICE);
    return { ready: true, tid, nice: os.getPriority(tid) };
  } catch {
    return { ready: true, tid, nice: null };
  }
}

const port = parentPort;
if (port) {
  port.postMessage(lowerPriority());
  port.on('message', (req: HashRequest) => {
    let reply: HashReply;
    try {
      reply = { id: req.id, hash: scryptSync(req.password, req.salt, req.keyLength, req.params) };
    } catch (err) {
      reply = { id: req.id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  });
}
