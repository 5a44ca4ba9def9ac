import type { Deps } from '../../context.ts';
import type { JobDefinition } from '../../jobs/boss.ts';
import { withRequestId } from '../../http/request-scope.ts';
import { type AttemptRounds, attemptRounds, deliverOne, MAX_IN_FLIGHT } from './deliver.ts';
import { DISPATCH_BATCH, dispatchEvents } from './dispatch.ts';
import { type DeliverJob, deliverQueue, SWEEP_BATCH, sweepDeliveries } from './sweep.ts';
import { InFlight } from './in-flight.ts';
import { WorkerLock } from './worker-lock.ts';

/**
 * The delivery engine of one worker process: a loop that fans new events out to deliveries and hands due attempts to
 * the `webhook.deliver` queue, and the worker lock that marks this process's attempts as alive. Every process that
 * runs workers has one; any number of them share the work through row locks (`skip locked`).
 */
export class DeliveryPump {
  readonly lock: WorkerLock;
  readonly active = new InFlight(MAX_IN_FLIGHT);
  readonly attempts: AttemptRounds;
  private readonly deps: Deps;
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private running = false;
  private rounds = 0;
  private inRound = false;
  private waiters: { after: number; wake: () => void }[] = [];

  constructor(deps: Deps) {
    this.deps = deps;
    this.lock = new WorkerLock(deps.db, deps.log, deps.clock);
    this.attempts = attemptRounds(deps, this.lock);
  }

  async start(): Promise<void> {
    if (this.running) return;
    await this.lock.acquire();
    this.running = true;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    // The wall clock, not deps.clock: how often to look is a polling cadence (20 ms in tests), not business time, and
    // tests freeze the clock while the engine works (a frozen business clock must not stop deliveries).
    // Whoever started the pump (a request, in some tests and tools), its rounds are part of no request.
    this.timer = setTimeout(() => {
      this.round = withRequestId(undefined, () => this.tick()).finally(() => (this.round = null));
    }, ms);
  }

  /** One round; a full batch goes again at once, otherwise the next round waits for the interval. */
  async tick(): Promise<void> {
    this.inRound = true;
    let busy = false;
    try {
      const now = this.deps.clock.now();
      busy = (await dispatchEvents(this.deps.db, now)) === DISPATCH_BATCH;
      busy = (await sweepDeliveries(this.deps.db, this.deps.jobs, now)) === SWEEP_BATCH || busy;
    } catch (err) {
      // PostgreSQL away or restarting: nothing was committed; the next round tries again.
      this.deps.log.warn({ err }, 'webhook pump round failed');
    }
    this.inRound = false;
    this.rounds++;
    this.waiters = this.waiters.filter((w) => (w.after <= this.rounds ? (w.wake(), false) : true));
    this.schedule(busy ? 0 : this.deps.config.WEBHOOK_PUMP_INTERVAL_MS);
  }

  /** Resolves when a whole round that started after this call has finished (tests wait on rounds, not on time). */
  nextRound(): Promise<void> {
    return new Promise((wake) => this.waiters.push({ after: this.rounds + (this.inRound ? 2 : 1), wake }));
  }

  /** Stops the loop (after the round under way). Attempts in flight go on; `release` waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.round;
  }

  /** After the queue stopped: waits for this process's attempts to be recorded, then gives the worker key up. */
  async release(): Promise<void> {
    await this.stop();
    await this.active.settled();
    await this.lock.release();
  }
}

const pumps = new WeakMap<Deps, DeliveryPump>();

/** The one pump of a running app (keyed by its Deps, so two apps in one test process behave as two processes). */
export function pumpOf(deps: Deps): DeliveryPump {
  let pump = pumps.get(deps);
  if (!pump) {
    pump = new DeliveryPump(deps);
    pumps.set(deps, pump);
  }
  return pump;
}

/**
 * `webhook.deliver`: up to ATTEMPTS_PER_JOB attempts of one sweep per job, each taken and sent on its own. pg-boss never
 * retries it (retryLimit 0): the schedule and the recovery of lost attempts are the sweeper's, on `deps.clock`.
 * Finished jobs go after 15 minutes: they are many. A fetch brings 2 jobs (50 attempts), a quarter of what a process
 * sends at once, so the next fetch comes while earlier attempts are still out: sends stream instead of running in waves
 * (a fetch as big as MAX_IN_FLIGHT waited for nearly all of the last wave to end, and measured slower).
 */
export function deliverJob(deps: Deps): JobDefinition<DeliverJob> {
  return {
    queue: deliverQueue.name,
    retryLimit: 0,
    batchSize: 2,
    concurrent: true,
    queueOptions: { notify: true, deleteAfterSeconds: 15 * 60, expireInSeconds: 5 * 60 },
    parse: deliverQueue.parse,
    handle: async (job) => {
      const pump = pumpOf(deps);
      await Promise.all(job.attempts.map((a) => deliverOne(deps, pump, a)));
    },
  };
}
