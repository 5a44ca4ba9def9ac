import type { Db } from '@leadwire/db';
import { PgBoss } from 'pg-boss';
import type { Logger } from '../context.ts';
import type { Jobs } from './queue.ts';

export interface JobDefinition<T extends object = object> {
  queue: string;
  /** Retry policy of the queue. */
  retryLimit?: number;
  retryDelay?: number;
  /** Cron in UTC for recurring jobs; pg-boss runs each tick once across all worker processes. */
  cron?: string;
  handle(data: T): Promise<void>;
  parse(data: unknown): T;
}

/**
 * pg-boss in the application database. It owns its own small pool (LISTEN/NOTIFY needs one), while `send` goes
 * through the caller's transaction so a job exists exactly when the write that wanted it commits.
 */
export class BossRuntime implements Jobs {
  readonly boss: PgBoss;
  private readonly log: Logger;

  constructor(url: string, log: Logger) {
    this.log = log;
    this.boss = new PgBoss({ connectionString: url, max: 4, application_name: 'leadwire-jobs' });
    this.boss.on('error', (err) => this.log.error({ err }, 'job queue error'));
  }

  async start(definitions: readonly JobDefinition[]): Promise<void> {
    await this.boss.start();
    for (const d of definitions) {
      await this.boss.createQueue(d.queue, { retryLimit: d.retryLimit ?? 3, retryDelay: d.retryDelay ?? 30 });
    }
  }

  async send(db: Db, queue: string, data: object, options: { startAfter?: Date | number } = {}) {
    await this.boss.send(queue, data, { ...options, db: { executeSql: (text: string, values?: unknown[]) => db.raw(text, values) } });
  }

  /** Starts the handlers and the schedules: only in processes that run workers. */
  async work(definitions: readonly JobDefinition[]): Promise<void> {
    for (const d of definitions) {
      await this.boss.work(d.queue, async (jobs) => {
        for (const job of jobs) await d.handle(d.parse(job.data));
      });
      if (d.cron) await this.boss.schedule(d.queue, d.cron, {}, { tz: 'UTC' });
    }
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }
}
