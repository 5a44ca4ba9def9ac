import type { Db } from '@leadwire/db';
import { type JobResult, PgBoss, type Queue } from 'pg-boss';
import type { Logger } from '../context.ts';
import { currentRequestId, withRequestId } from '../http/request-scope.ts';
import type { JobQueue, Jobs, SendOptions } from './queue.ts';

/** A job queued as part of a request carries its id (request-scope.ts), unless the caller set one already. */
function stamped(data: object): object {
  const requestId = currentRequestId();
  return requestId === undefined || 'requestId' in data ? data : { ...data, requestId };
}

/** The id of the request that queued a job: its handler runs as part of that request (logs, events, further jobs). */
function requestIdOf(data: unknown): string | undefined {
  const id = typeof data === 'object' && data !== null ? (data as { requestId?: unknown }).requestId : undefined;
  return typeof id === 'string' ? id : undefined;
}

/**
 * How often a worker of a `notify` queue (all of ours) polls anyway, for what no NOTIFY announces: a job whose retry
 * delay or start time has come. Once a minute: such a job starts up to a minute late (pg-boss's default, 30 s, would
 * double what seven idle queues cost an idle server; docs/operating.md, "An idle server").
 */
export const NOTIFY_QUEUE_POLL_S = 60;

export interface JobDefinition<T extends object = object> {
  queue: string;
  /** Retry policy of the queue. */
  retryLimit?: number;
  retryDelay?: number;
  /**
   * Further queue options: backoff, retention, `notify` (wake workers at once instead of at their next poll). Only
   * options pg-boss can change on an existing queue, since every start applies them again.
   */
  queueOptions?: Omit<Queue, 'name' | 'retryLimit' | 'retryDelay' | 'policy' | 'partition'>;
  /** Jobs fetched at once (default 1); give queues that can back up, such as mail, more. */
  batchSize?: number;
  /** Run the jobs of a batch at the same time rather than one after another (jobs that mostly wait on the network). */
  concurrent?: boolean;
  /**
   * Cron in UTC for recurring jobs; pg-boss runs each tick once across all processes, and a tick missed while none
   * ran once when one is back.
   */
  cron?: string;
  handle(data: T): Promise<void>;
  parse(data: unknown): T;
}

/** Whether a queue as pg-boss reads it back (getQueues) already has every option a definition gives it. */
function hasOptions(queue: Queue, options: Partial<Queue>): boolean {
  return Object.entries(options).every(([key, value]) => queue[key as keyof Queue] === value);
}

/** SQLSTATE of a connection PostgreSQL ends because it is shutting down. */
const ADMIN_SHUTDOWN = '57P01';

/**
 * pg-boss in the application database. It owns its own small pool (LISTEN/NOTIFY needs one), while `send` goes
 * through the caller's transaction so a job exists exactly when the write that wanted it commits.
 */
export class BossRuntime implements Jobs {
  readonly boss: PgBoss;
  private readonly log: Logger;
  private stopping = false;
  /** This process's pg-boss workers, by queue (`wake`). */
  private readonly workers = new Map<string, string[]>();

  constructor(url: string, log: Logger, opts: { cronIntervalS?: number } = {}) {
    this.log = log;
    // LISTEN/NOTIFY wakes workers of `notify` queues the moment a job commits. Deletion of finished jobs runs every 5
    // minutes rather than pg-boss's daily default, so short retentions (the mail queue's) hold.
    // Every other timer is a poll that costs an idle server a transaction each time (issue 27; docs/operating.md, "An
    // idle server"), so each runs no more often than what it serves needs:
    //  - a worker of a notify queue polls only for what no NOTIFY announces (NOTIFY_QUEUE_POLL_S, in `work`).
    //  - flows (dependent jobs) are not used: their resolution pass runs every 5 minutes instead of every 5 seconds;
    //    the background migration check likewise every 10 minutes.
    //  - supervision (expiry of jobs past expireIn, deletion of finished ones), the queue-size monitor and the queue
    //    cache every 5 minutes instead of every minute: nothing of ours waits on them (a delivery's recovery is the
    //    sweep's, on its own leases; retention is measured in minutes to days).
    const cronS = opts.cronIntervalS ?? 30;
    this.boss = new PgBoss({
      connectionString: url,
      // pg-boss's own pool serves only the queue's bookkeeping (fetching, settling, its timers): jobs do their work on
      // the process's pools, and a send runs in the sender's transaction. Two: one for a long maintenance statement,
      // one for the rest. With four, every start opened all four for its queues' first fetches (about 25 ms of CPU
      // more per start, measured over 45 starts) and every process held them (docs/operating.md).
      max: 2,
      application_name: 'leadwire-jobs',
      useListenNotify: true,
      maintenanceIntervalSeconds: 300,
      superviseIntervalSeconds: 300,
      monitorIntervalSeconds: 300,
      queueCacheIntervalSeconds: 300,
      flowIntervalSeconds: 300,
      bamIntervalSeconds: 600,
      // The pass that turns a schedule's tick into a job, and the poll that forwards it to its queue, at the same
      // pace: a pass more often than the forwarding poll would only queue ticks behind it, and a forwarding poll more
      // often than the pass finds nothing. A tick's job is queued at most two intervals after its minute.
      cronMonitorIntervalSeconds: cronS,
      cronWorkerIntervalSeconds: cronS,
    });
    this.boss.on('error', (err) => {
      // Once we stop the queue, the database goes next: a pg-boss connection still closing when PostgreSQL shuts down
      // is ended by it (57P01, "terminating connection due to administrator command"). That is our own shutdown, not
      // a failure of the queue; any other error, or this one while running, is.
      if (this.stopping && (err as { code?: unknown }).code === ADMIN_SHUTDOWN)
        this.log.info({ err }, 'job queue connection ended by the shutdown');
      else this.log.error({ err }, 'job queue error');
    });
  }

  async start(definitions: readonly JobDefinition[]): Promise<void> {
    await this.boss.start();
    // The definitions in the code are applied on every start, since createQueue leaves a queue that exists as it was
    // created and a deployment that changes a queue's options (e.g. turning on notify) would keep the old ones forever.
    // One read finds what already matches, so a start on an up-to-date database writes nothing (before, every start of
    // every process ran a create and an update for each of the ten queues).
    const current = new Map((await this.boss.getQueues(definitions.map((d) => d.queue))).map((q) => [q.name, q]));
    for (const d of definitions) {
      const options = { retryLimit: d.retryLimit ?? 3, retryDelay: d.retryDelay ?? 30, ...d.queueOptions };
      const queue = current.get(d.queue);
      // A queue another process creates meanwhile (an older deployment, say) is left as it was: hence the update after it.
      if (!queue) await this.boss.createQueue(d.queue, options);
      if (!queue || !hasOptions(queue, options)) await this.boss.updateQueue(d.queue, options);
    }
  }

  async send(db: Db, queue: JobQueue, data: object, options: SendOptions = {}) {
    await this.boss.send(queue.name, stamped(data), {
      ...options,
      db: { executeSql: (text: string, values?: unknown[]) => db.raw(text, values) },
    });
  }

  async sendMany(db: Db, queue: JobQueue, data: readonly object[]) {
    if (data.length === 0) return;
    await this.boss.insert(
      queue.name,
      data.map((d) => ({ data: stamped(d) })),
      { db: { executeSql: (text: string, values?: unknown[]) => db.raw(text, values) } },
    );
  }

  /** Starts the handlers and the schedules: only in processes that run workers. */
  async work(definitions: readonly JobDefinition[]): Promise<void> {
    for (const d of definitions) {
      // Each job of a batch settles on its own, so one failure retries only itself. A full batch fetches again at once:
      // a NOTIFY wakes a worker only once, and without that a backlog would drain one job per polling interval.
      const worker = await this.boss.work(
        d.queue,
        { batchSize: d.batchSize ?? 1, burstWhenBatchFull: true, perJobResults: true, notifyPollingIntervalSeconds: NOTIFY_QUEUE_POLL_S },
        async (jobs) => {
          // Each job runs as part of the request that queued it, if one did: its log lines (these included) carry the
          // request's reqId, and what it writes or queues carries the id on.
          const settle = (job: (typeof jobs)[number]): Promise<JobResult> =>
            withRequestId(requestIdOf(job.data), () => this.settle(d, job));
          if (d.concurrent) return Promise.all(jobs.map(settle));
          const results: JobResult[] = [];
          for (const job of jobs) results.push(await settle(job));
          return results;
        },
      );
      this.workers.set(d.queue, [...(this.workers.get(d.queue) ?? []), worker]);
      // `missed: 'once'`: a tick that fell while no process ran (a deploy across 05:00, an outage) is sent once by the
      // first pass after, instead of waiting for the next one; pg-boss files it under the tick's own minute, so two
      // passes never send it twice.
      if (d.cron) await this.boss.schedule(d.queue, d.cron, {}, { tz: 'UTC', missed: 'once' });
    }
  }

  wake(queue: JobQueue): void {
    for (const worker of this.workers.get(queue.name) ?? []) this.boss.notifyWorker(worker);
  }

  private async settle(d: JobDefinition, job: { id: string; data: unknown }): Promise<JobResult> {
    const started = performance.now();
    try {
      await d.handle(d.parse(job.data));
      this.log.debug({ queue: d.queue, jobId: job.id, ms: Math.round(performance.now() - started) }, 'job done');
      return { id: job.id, status: 'completed' };
    } catch (err) {
      // pg-boss keeps the failure on the job (and retries it by the queue's policy); the line says when and for whom.
      this.log.warn({ err, queue: d.queue, jobId: job.id }, 'job failed');
      return {
        id: job.id,
        status: 'failed',
        output: { name: err instanceof Error ? err.name : 'Error', message: err instanceof Error ? err.message : String(err) },
      };
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }
}
