import { qb, sql, statement, type Db } from '@leadwire/db';
import { accountErrors } from './errors.ts';
import { ThrottleGate } from './throttle-gate.ts';
import { refusals } from '../metrics/registry.ts';

/**
 * Brute-force policy after OWASP's Authentication Cheat Sheet, over a sliding 15-minute window of failed password
 * checks. No rule lets a stranger lock an owner out: every refusal falls on an address that has itself failed.
 *
 * - Per account and address pair (the guesser): 3 failures are free; then each next attempt of the pair must wait 1 s
 *   after its last failure, doubling up to 15 minutes, and is refused (429 with `retry-after`) until then. A success
 *   of the pair wipes its slate.
 * - Per address, across accounts (password spraying): at 20 failures the address is refused for every account until
 *   the oldest of them leaves the window, except for accounts that signed in successfully from it within the last day
 *   (the owner's own address, shared with a stranger behind one NAT).
 * - Per account, across addresses (a botnet on one password): from 10 failures since the account's last success, a
 *   check from an address the account has not signed in from that day first waits 0.5 s, doubling up to 8 s. A wait,
 *   never a refusal: the right password from an address that did not fail is always checked. The wait holds no
 *   database connection and no hashing slot, and it reads the clock that tests move.
 */
export const THROTTLE = {
  windowMinutes: 15,
  /** How long a successful sign-in makes an address known to the account: attempts are kept a day (jobs/cleanup.ts). */
  knownForHours: 24,
  pair: { freeFailures: 3, baseDelayS: 1, maxDelayS: 15 * 60 },
  address: { budget: 20 },
  account: { slowFrom: 10, baseDelayMs: 500, maxDelayMs: 8_000 },
};

/** Seconds a pair must wait after its last failure, given its failures in the window: none for the first few. */
export function pairDelayS(failures: number): number {
  const { freeFailures, baseDelayS, maxDelayS } = THROTTLE.pair;
  if (failures < freeFailures) return 0;
  return Math.min(baseDelayS * 2 ** (failures - freeFailures), maxDelayS);
}

/** The wait before checking a password from an address unknown to an account with `failures` across addresses. */
export function accountDelayMs(failures: number): number {
  const { slowFrom, baseDelayMs, maxDelayMs } = THROTTLE.account;
  if (failures < slowFrom) return 0;
  return Math.min(baseDelayMs * 2 ** (failures - slowFrom), maxDelayMs);
}

/**
 * The counts one decision needs, in one statement. Failures count from the pair's (or the account's) last success;
 * attempts still being checked count as failures until proven otherwise.
 */
const COUNTS = statement<{ email: string; ip: string; now: Date }>()((p) => {
  const windowStart = sql<Date>`${p.now}::timestamptz - make_interval(mins => ${THROTTLE.windowMinutes})`;
  const lastSuccess = (byIp: boolean) =>
    sql<Date>`coalesce(${qb
      .selectFrom('sign_in_attempts')
      .select((eb) => eb.fn.max('created_at').as('last'))
      .where('email', '=', p.email)
      .$if(byIp, (q) => q.where('ip', '=', p.ip))
      .where((eb) => eb.ref('succeeded'))}, '-infinity')`;
  return qb
    .with('pair', (db) =>
      db
        .selectFrom('sign_in_attempts')
        .select('created_at')
        .where('email', '=', p.email)
        .where('ip', '=', p.ip)
        .where((eb) => eb.not(eb.ref('succeeded')))
        .where('created_at', '>', windowStart)
        .where('created_at', '>', lastSuccess(true)),
    )
    .with('addr', (db) =>
      db
        .selectFrom('sign_in_attempts')
        .select('created_at')
        .where('ip', '=', p.ip)
        .where((eb) => eb.not(eb.ref('succeeded')))
        .where('created_at', '>', windowStart)
        .orderBy('created_at', 'desc')
        .limit(THROTTLE.address.budget),
    )
    .with('acct', (db) =>
      db
        .selectFrom('sign_in_attempts')
        .select(sql.lit(1).as('one'))
        .where('email', '=', p.email)
        .where((eb) => eb.not(eb.ref('succeeded')))
        .where('created_at', '>', windowStart)
        .where('created_at', '>', lastSuccess(false)),
    )
    .selectNoFrom((eb) => [
      sql<number>`(${eb.selectFrom('pair').select((eb) => eb.fn.countAll().as('n'))})::int`.as('pair_failures'),
      eb
        .selectFrom('pair')
        .select((eb) => eb.fn.max('pair.created_at').as('last'))
        .$asScalar()
        .as('pair_last'),
      sql<number>`(${eb.selectFrom('addr').select((eb) => eb.fn.countAll().as('n'))})::int`.as('address_failures'),
      eb
        .selectFrom('addr')
        .select((eb) => eb.fn.min('addr.created_at').as('oldest'))
        .$asScalar()
        .as('address_oldest'),
      sql<number>`(${eb.selectFrom('acct').select((eb) => eb.fn.countAll().as('n'))})::int`.as('account_failures'),
      eb
        .exists(
          eb
            .selectFrom('sign_in_attempts')
            .select(sql.lit(1).as('one'))
            .where('email', '=', p.email)
            .where('ip', '=', p.ip)
            .where((eb) => eb.ref('succeeded'))
            .where('created_at', '>', sql<Date>`${p.now}::timestamptz - make_interval(hours => ${THROTTLE.knownForHours})`),
        )
        .$castTo<boolean>()
        .as('known'),
    ]);
});

const RECORD = statement<{ email: string; ip: string; now: Date }>()((p) =>
  qb
    .insertInto('sign_in_attempts')
    .values({ email: p.email, ip: p.ip, succeeded: sql.lit(false), created_at: p.now })
    .returning('id'),
);

/** The address's lock, then the email's: always in this order. */
const LOCK_PAIR = statement<{ ipKey: string; emailKey: string }>()((p) =>
  qb.selectNoFrom([
    sql<void>`pg_advisory_xact_lock(hashtext(${p.ipKey}))`.as('ip_locked'),
    sql<void>`pg_advisory_xact_lock(hashtext(${p.emailKey}))`.as('email_locked'),
  ]),
);

const SUCCEEDED = statement<{ id: string }>()((p) =>
  qb
    .updateTable('sign_in_attempts')
    .set({ succeeded: sql.lit(true) })
    .where('id', '=', p.id),
);

const RECORD_SUCCESS = statement<{ email: string; ip: string; now: Date }>()((p) =>
  qb.insertInto('sign_in_attempts').values({ email: p.email, ip: p.ip, succeeded: sql.lit(true), created_at: p.now }),
);

/** The counts one decision reads; timestamps may come back from the pool as text. */
type Counts = Omit<NonNullable<(typeof COUNTS)['row']>, 'pair_last' | 'address_oldest'> & {
  pair_last: Date | string | null;
  address_oldest: Date | string | null;
};

/** A password check about to happen, already counted as a failure. */
export interface Attempt {
  id: string;
}

const secondsUntil = (at: number, now: Date) => Math.max(1, Math.ceil((at - now.getTime()) / 1000));

/** The refusal, if any, and the wait before checking. Pure, so the policy reads in one place. */
export function decide(c: Counts, now: Date): { retryAfterS: number } | { waitMs: number } {
  const delayS = pairDelayS(c.pair_failures);
  if (delayS && c.pair_last) {
    const allowedAt = new Date(c.pair_last).getTime() + delayS * 1000;
    if (allowedAt > now.getTime()) return { retryAfterS: secondsUntil(allowedAt, now) };
  }
  if (!c.known && c.address_failures >= THROTTLE.address.budget && c.address_oldest) {
    return { retryAfterS: secondsUntil(new Date(c.address_oldest).getTime() + THROTTLE.windowMinutes * 60_000, now) };
  }
  return { waitMs: c.known ? 0 : accountDelayMs(c.account_failures) };
}

/** One per process: see ThrottleGate. */
const checks = new ThrottleGate();

/**
 * Call before checking a password for `email` from `ip`: refuses with 429 `too_many_attempts` (and the seconds to
 * wait) under the rules above, otherwise records the attempt as a failure, waits the account's slow-down if any (on
 * `wait`, outside any transaction) and returns the attempt. Unknown emails are counted exactly like known ones, so the
 * throttle reveals nothing about who has an account. The advisory locks on the email and the address make parallel
 * guesses count one after another instead of all reading the same counts.
 */
export async function beginAttempt(db: Db, email: string, ip: string, now: Date, wait: (ms: number) => Promise<void>): Promise<Attempt> {
  const { verdict, id } = await checks.run(ip, () =>
    db.transaction(async (tx) => {
      await tx.run(LOCK_PAIR, { ipKey: `sign-in:ip:${ip}`, emailKey: `sign-in:email:${email}` });
      const [counts] = await tx.run(COUNTS, { email, ip, now });
      const verdict = decide(counts!, now);
      if ('retryAfterS' in verdict) return { verdict };
      const [row] = await tx.run(RECORD, { email, ip, now });
      return { verdict, id: row!.id };
    }),
  );
  if ('retryAfterS' in verdict) {
    refusals.inc({ reason: 'too_many_attempts' });
    throw accountErrors.tooManyAttempts(verdict.retryAfterS);
  }
  if (verdict.waitMs) await wait(verdict.waitMs);
  return { id: id! };
}

/** The password was right: the attempt no longer counts, and the earlier failures of its pair and account stop counting. */
export async function attemptSucceeded(db: Db, attempt: Attempt): Promise<void> {
  await db.run(SUCCEEDED, { id: attempt.id });
}

/**
 * After a password reset the owner has proven control of the account: a success recorded for it ends the account's
 * slow-down (failures before the last success do not count). Other addresses keep their counts.
 */
export async function clearAccountLock(db: Db, email: string, ip: string, now: Date): Promise<void> {
  await db.run(RECORD_SUCCESS, { email, ip, now });
}
