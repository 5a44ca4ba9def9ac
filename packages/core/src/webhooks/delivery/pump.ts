import { AsyncLocalStorage } from 'node:async_hooks';
import type { Deps } from '../../context.ts';
import type { JobDefinition } from '../../jobs/boss.ts';
import { withRequestId } from '../../http/request-scope.ts';
import { type AttemptRounds, attemptRounds, deliverOne, MAX_IN_FLIGHT } from './deliver.ts';
import { DISPATCH_BATCH, dispatchEvents } from './dispatch.ts';
import { type DeliverJob, deliverQueue, SWEEP_BATCH, sweepAndPlan } from './sweep.ts';
import { InFlight } from './in-flight.ts';
import { WorkerLock } from './worker-lock.ts';
import type { ClockTimer } from '../../clock.ts';
import { onOutboxWritten } from '../../events/written.ts';

/** The next look after a failed round, at most: wakes sent while PostgreSQL was away may be lost. */
const RETRY_AFTER_FAILURE_MS = 1_000;
/** The next look when an attempt is due but was not claimed: another pump's round holds it (skip locked). */
const HELD_ELSEWHERE_MS = 1_000;
/**
 * Rounds a stream of wakes may start, at most one per this gap: the poll it replaces ran every 100 ms, so under load
 * the pump costs what it did (two transactions per round), and a lone event after a quiet spell is taken at once.
 */
export const WAKE_GAP_MS = 100;

/**
 * The delivery engine of one worker process: a loop that fans new events out to deliveries and hands due attempts to
 * the `webhook.deliver` queue, and the worker lock that marks this process's attempts as alive. Every process that
 * runs workers has one; any number of them share the work through row locks (`skip locked`).
 *
 * An idle pump costs its database next to nothing (issue 27): it does not poll. It runs a round when
 *  - woken (`wake`): once a write that queued work for it (outbox events, a manual delivery) committed, in memory when
 *    the writer is in this process, by a NOTIFY from an api process otherwise (wake.ts);
 *  - the earliest due attempt it knows of comes due (a retry, an attempt's lease), on deps.clock, since due times are
 *    business time;
 *  - the backstop comes (WEBHOOK_PUMP_INTERVAL_MS, 30 s by default, on the wall clock): the one poll left, for what no
 *    signal announces (a worker that died with attempts in flight is seen by its missing lock) and for a wake lost
 *    while the LISTEN connection was down.
 * A round that found a full batch goes again at once.
 */
export class DeliveryPump {
  readonly lock: WorkerLock;
  readonly active = new InFlight(MAX_IN_FLIGHT);
  readonly attempts: AttemptRounds;
  private readonly deps: Deps;
  private timer: NodeJS.Timeout | null = null;
  private dueTimer: ClockTimer | null = null;
  /** When dueTimer fires, in deps.clock's milliseconds. */
  private dueAt = Number.POSITIVE_INFINITY;
  private round: Promise<void> | null = null;
  private running = false;
  private rounds = 0;
  private inRound = false;
  /** A wake came during a round: what it announced may have committed after the round looked, so look again. */
  private woken = false;
  private waiters: { after: number; wake: () => void }[] = [];
  /** What the last round decided: the backstop's delay (0: go again) and the earliest due time (deps.clock ms). */
  private nextDelay = 0;
  private nextDue = Number.POSITIVE_INFINITY;
  /** When the wall-clock timer fires and when the last round began (performance.now()). */
  private timerAt = Number.POSITIVE_INFINITY;
  private lastStart = Number.NEGATIVE_INFINITY;
  private unlisten: (() => void) | null = null;
  private detached: <R>(fn: () => R) => R = (fn) => fn();
  /** Due times announced during a round (dueBy). */
  private hint = Number.POSITIVE_INFINITY;

  constructor(deps: Deps) {
    this.deps = deps;
    this.lock = new WorkerLock(deps.db, deps.log, deps.clock);
    this.attempts = attemptRounds(deps, this.lock, (at) => this.dueBy(at));
  }

  async start(): Promise<void> {
    if (this.running) return;
    await this.lock.acquire();
    // Rounds are part of no request: a wake comes from inside one (its commit), and a timer set there would carry the
    // request's async context (its trace, its id) into the round. Timers are set in the context of whoever started
    // the pump, as when the loop only ever rescheduled itself.
    this.detached = AsyncLocalStorage.snapshot();
    this.running = true;
    this.unlisten = onOutboxWritten(() => this.wake());
    this.schedule(0);
  }

  /**
   * Runs a round soon: at once after a quiet spell, else WAKE_GAP_MS after the last one began (a busy process's
   * writes wake it a thousand times a second; they share rounds); right after the current round when in one.
   */
  wake(): void {
    if (!this.running) return;
    if (this.round) {
      this.woken = true;
      return;
    }
    const ms = Math.max(0, this.lastStart + WAKE_GAP_MS - performance.now());
    if (this.timerAt > performance.now() + ms) this.schedule(ms);
  }

  /** Something comes due at `at` (deps.clock): a round then, unless one is planned earlier. */
  dueBy(at: Date): void {
    if (!this.running) return;
    // During a round, its own look at the earliest due time may have come before the write that announced this one.
    if (this.round) this.hint = Math.min(this.hint, at.getTime());
    else if (at.getTime() < this.dueAt) this.setDue(at.getTime());
  }

  private setDue(at: number): void {
    this.deps.clock.clearTimeout(this.dueTimer);
    this.dueAt = at;
    this.dueTimer = this.detached(() =>
      this.deps.clock.setTimeout(() => this.schedule(0), Math.max(0, at - this.deps.clock.now().getTime())),
    );
  }

  private clearTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.deps.clock.clearTimeout(this.dueTimer);
    this.dueTimer = null;
    this.dueAt = Number.POSITIVE_INFINITY;
  }

  private schedule(ms: number): void {
    if (!this.running || this.round) return;
    this.clearTimers();
    this.timerAt = performance.now() + ms;
    // The backstop is on the wall clock, not deps.clock: how often to look is a polling cadence, not business time,
    // and tests freeze the clock while the engine works (a frozen business clock must not stop deliveries).
    // Whoever started the pump (a request, in some tests and tools), its rounds are part of no request.
    this.timer = this.detached(() => setTimeout(() => this.startRound(), ms));
  }

  private startRound(): void {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.lastStart = performance.now();
    this.deps.clock.clearTimeout(this.dueTimer);
    this.dueTimer = null;
    this.dueAt = Number.POSITIVE_INFINITY;
    this.round = withRequestId(undefined, () => this.tick()).finally(() => {
      this.round = null;
      this.next();
    });
  }

  private next(): void {
    const due = Math.min(this.nextDue, this.hint);
    this.hint = Number.POSITIVE_INFINITY;
    if (!this.running) return;
    if (this.woken) {
      this.woken = false;
      this.schedule(Math.max(0, this.lastStart + WAKE_GAP_MS - performance.now()));
      return;
    }
    this.schedule(this.nextDelay);
    if (this.nextDelay > 0 && due < Number.POSITIVE_INFINITY) this.setDue(due);
  }

  /**
   * One round; a full batch goes again at once. Otherwise it reads when the earliest attempt comes due, and the next
   * round waits for that, for a wake, or for the backstop, whichever comes first.
   */
  async tick(): Promise<void> {
    this.inRound = true;
    let busy = false;
    let due: Date | null = null;
    let failed = false;
    try {
      const now = this.deps.clock.now();
      busy = (await dispatchEvents(this.deps.db, now)) === DISPATCH_BATCH;
      const swept = await sweepAndPlan(this.deps.db, this.deps.jobs, now);
      // The jobs just committed: this process's own deliver workers are told in memory, like the pump's own wakes, since
      // the NOTIFY reaches them only once pg-boss's LISTEN connection is back after an outage, up to 30 s after the
      // database (measured: deliveries resumed 6.4 s after a 9 s outage ended; docs/operating.md).
      if (swept.claimed > 0) this.deps.jobs.wake(deliverQueue);
      busy = swept.claimed === SWEEP_BATCH || busy;
      due = swept.due;
    } catch (err) {
      // PostgreSQL away or restarting: nothing was committed; the next round tries again.
      this.deps.log.warn({ err }, 'webhook pump round failed');
      failed = true;
    }
    this.inRound = false;
    this.rounds++;
    this.waiters = this.waiters.filter((w) => (w.after <= this.rounds ? (w.wake(), false) : true));
    const backstop = this.deps.config.WEBHOOK_PUMP_INTERVAL_MS;
    // After a failure, the next look comes no later than RETRY_AFTER_FAILURE_MS: the wakes sent meanwhile may be lost.
    this.nextDelay = busy ? 0 : failed ? Math.min(backstop, RETRY_AFTER_FAILURE_MS) : backstop;
    // Something due now that this round did not claim is held by another pump's round (skip locked): it is theirs,
    // and this pump looks again a little later rather than spinning.
    const nowMs = this.deps.clock.now().getTime();
    this.nextDue =
      due === null ? Number.POSITIVE_INFINITY : Math.max(due.getTime(), nowMs + (due.getTime() <= nowMs ? HELD_ELSEWHERE_MS : 0));
  }

  /**
   * What the pump waits for between rounds (tests and the idle figures read it): the backstop's wall-clock delay from
   * now, and the due time it sleeps until on deps.clock; null while a round runs or is about to.
   */
  get plan(): { backstopInMs: number; dueAt: Date | null } | null {
    if (this.round || !Number.isFinite(this.timerAt)) return null;
    return {
      backstopInMs: Math.max(0, this.timerAt - performance.now()),
      dueAt: Number.isFinite(this.dueAt) ? new Date(this.dueAt) : null,
    };
  }

  /** Resolves when a whole round that started after this call has finished (tests wait on rounds, not on time). It asks for one. */
  nextRound(): Promise<void> {
    const done = new Promise<void>((wake) => this.waiters.push({ after: this.rounds + (this.inRound ? 2 : 1), wake }));
    this.wake();
    return done;
  }

  /** Stops the loop (after the round under way). Attempts in flight go on; `release` waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    this.unlisten?.();
    this.unlisten = null;
    this.clearTimers();
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
