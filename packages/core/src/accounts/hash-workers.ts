import { Worker } from 'node:worker_threads';
import type { HashReply, HashRequest, ThreadReady } from './hash-thread.ts';

const THREAD_FILE = new URL('./hash-thread.ts', import.meta.url);

/** One hashing thread: started on first use, replaced if it ever dies. */
class HashThread {
  private worker: Worker | undefined;
  private ready: Promise<ThreadReady> | undefined;
  private readonly pending = new Map<number, { resolve: (hash: Buffer) => void; reject: (err: Error) => void }>();
  private next = 0;
  private retired = false;

  private start(): { worker: Worker; ready: Promise<ThreadReady> } {
    if (this.worker && this.ready) return { worker: this.worker, ready: this.ready };
    const worker = new Worker(THREAD_FILE);
    // An idle hashing thread must never keep the process alive (tests, the admin CLI).
    worker.unref();
    const ready = new Promise<ThreadReady>((resolve, reject) => {
      worker.once('message', (msg: ThreadReady) => resolve(msg));
      worker.once('error', reject);
    });
    ready.catch(() => undefined);
    worker.on('message', (msg: HashReply | ThreadReady) => {
      if ('ready' in msg) return;
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      this.idle(worker);
      if ('hash' in msg) waiter.resolve(Buffer.from(msg.hash.buffer, msg.hash.byteOffset, msg.hash.byteLength));
      else waiter.reject(new Error(`password hashing failed: ${msg.error}`));
    });
    const fail = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.ready = undefined;
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the password hashing thread exited (${code})`)));
    this.worker = worker;
    this.ready = ready;
    return { worker, ready };
  }

  async scrypt(password: string, salt: Buffer, keyLength: number, params: HashRequest['params']): Promise<Buffer> {
    const { worker, ready } = this.start();
    await ready;
    const id = this.next++;
    // Held while a hash is under way: an awaited hash keeps the process alive, an idle thread does not.
    worker.ref();
    return new Promise<Buffer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, password, salt, keyLength, params } satisfies HashRequest);
    });
  }

  private idle(worker: Worker): void {
    if (this.pending.size > 0) return;
    worker.unref();
    if (this.retired) void this.stop();
  }

  /** Ends the thread once its hash under way (if any) is done. */
  retire(): void {
    this.retired = true;
    if (this.pending.size === 0) void this.stop();
  }

  /** The thread's kernel task id and nice value, starting it if need be. */
  async describe(): Promise<ThreadReady> {
    return this.start().ready;
  }

  get busy(): boolean {
    return this.pending.size > 0;
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    await worker?.terminate();
  }
}

/**
 * Password hashing off the event loop and below its priority: `size` threads of our own, each at the lowest
 * scheduling priority (hash-thread.ts), each computing one scrypt at a time. A hash costs about 0.1 s of CPU at the
 * default cost on our hardware class and 0.6 s on a slow host, and anyone may trigger one (sign-up, sign-in, an
 * unknown email checked against a dummy hash): run on libuv's pool at the process's own priority, two at once held
 * both cores of a 2-core machine, and every tenant's request waited behind them (docs/benchmarks.md). Niced, a hash
 * gets what the event loop and PostgreSQL leave, so a flood of them slows sign-ins, never the API; with at most half
 * the cores (PASSWORD_HASH_CONCURRENCY's default) hashing never holds the whole machine even when it is otherwise idle.
 *
 * The caller bounds the hashes in flight to `size` (HashSlots), so a free thread is always found.
 */
export class HashWorkers {
  private threads: HashThread[] = [];

  constructor(size: number) {
    this.resize(size);
  }

  get size(): number {
    return this.threads.length;
  }

  /** Grows or shrinks to `size` threads; a thread let go finishes the hash it is computing first. */
  resize(size: number): void {
    while (this.threads.length < size) this.threads.push(new HashThread());
    for (const gone of this.threads.splice(size)) gone.retire();
  }

  scrypt(password: string, salt: Buffer, keyLength: number, params: HashRequest['params']): Promise<Buffer> {
    // The first idle thread; with more callers than threads (a caller that bypassed the slots), they queue on one.
    const thread = this.threads.find((t) => !t.busy) ?? this.threads[0]!;
    return thread.scrypt(password, salt, keyLength, params);
  }

  /** Each thread's kernel task id and nice value (starting them), for tests and diagnostics. */
  describe(): Promise<ThreadReady[]> {
    return Promise.all(this.threads.map((t) => t.describe()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.stop()));
  }
}
