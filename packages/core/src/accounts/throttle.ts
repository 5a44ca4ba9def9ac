import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@leadwire/db';
import { accountErrors } from './errors.ts';

/**
 * Brute-force policy, over a sliding 15-minute window of failed password checks. Per account: from the 3rd failure each
 * attempt waits 0.5 s, then 1 s; the 5th failure locks the account until the oldest of them leaves the window (a
 * successful sign-in or a password reset wipes the slate). Per address: from the 10th failure attempts wait 0.25 s,
 * doubling to at most 2 s; the 20th locks the address. The per-account lock protects one password against a
 * botnet, the per-address lock protects every account against one guesser (password spraying).
 */
export const THROTTLE = {
  windowMinutes: 15,
  account: { slowFrom: 3, lockAt: 5, baseDelayMs: 500, maxDelayMs: 1_000 },
  address: { slowFrom: 10, lockAt: 20, baseDelayMs: 250, maxDelayMs: 2_000 },
};

/** The wait before a password check, given the failures already counted: none below `slowFrom`, then doubling to the cap. */
export function delayFor(failures: number, rule: (typeof THROTTLE)['account']): number {
  if (failures < rule.slowFrom) return 0;
  return Math.min(rule.baseDelayMs * 2 ** (failures - rule.slowFrom), rule.maxDelayMs);
}

/**
 * Counts recent failures for the email (since its last success) and for the address and, unless either is locked,
 * records this attempt as a failure until proven otherwise. Both run under advisory locks on the email and the
 * address, so parallel guesses are counted one after another instead of all reading the same count.
 */
const CHECK_AND_RECORD = `
with acct as (
  select created_at from sign_in_attempts
  where email = ? and not succeeded and created_at > ?::timestamptz - make_interval(mins => ?)
    and created_at > coalesce((select max(created_at) from sign_in_attempts where email = ? and succeeded), '-infinity')
  order by created_at desc limit ?
), addr as (
  select created_at from sign_in_attempts
  where ip = ? and not succeeded and created_at > ?::timestamptz - make_interval(mins => ?)
  order by created_at desc limit ?
), verdict as (
  select
    (select count(*) from acct)::int as account_failures,
    (select ceil(extract(epoch from min(created_at) + make_interval(mins => ?) - ?::timestamptz)) from acct)::int as account_retry,
    (select count(*) from addr)::int as address_failures,
    (select ceil(extract(epoch from min(created_at) + make_interval(mins => ?) - ?::timestamptz)) from addr)::int as address_retry
), recorded as (
  insert into sign_in_attempts (email, ip, succeeded, created_at)
  select ?, ?, false, ?::timestamptz from verdict where account_failures < ? and address_failures < ?
  returning id
)
select verdict.account_failures, verdict.account_retry, verdict.address_failures, verdict.address_retry,
  (select id from recorded) as attempt_id from verdict`;

interface Verdict {
  account_failures: number;
  account_retry: number | null;
  address_failures: number;
  address_retry: number | null;
  attempt_id: string | null;
}

/** A password check about to happen, already counted as a failure. */
export interface Attempt {
  id: string;
}

/**
 * Call before checking a password for `email` from `ip`: refuses with 429 `too_many_attempts` (and the seconds to
 * wait) when either is locked, otherwise waits the growing delay and returns the recorded attempt. Unknown emails
 * are counted exactly like known ones, so the throttle reveals nothing about who has an account.
 */
export async function beginAttempt(db: Db, email: string, ip: string, now: Date): Promise<Attempt> {
  const w = THROTTLE.windowMinutes;
  const { account, address } = THROTTLE;
  const verdict = await db.transaction(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?)), pg_advisory_xact_lock(hashtext(?))', [`sign-in:ip:${ip}`, `sign-in:email:${email}`]);
    const [row] = await tx.execute<Verdict[]>(CHECK_AND_RECORD, [
      email, now, w, email, account.lockAt,
      ip, now, w, address.lockAt,
      w, now, w, now,
      email, ip, now, account.lockAt, address.lockAt,
    ]);
    return row!;
  });
  if (!verdict.attempt_id) {
    const waits = [
      verdict.account_failures >= account.lockAt ? verdict.account_retry : null,
      verdict.address_failures >= address.lockAt ? verdict.address_retry : null,
    ];
    throw accountErrors.tooManyAttempts(Math.max(1, ...waits.map((s) => s ?? 1)));
  }
  const delay = Math.max(delayFor(verdict.account_failures, account), delayFor(verdict.address_failures, address));
  if (delay) await sleep(delay);
  return { id: verdict.attempt_id };
}

/** The password was right: the attempt no longer counts, and the account's earlier failures stop counting too. */
export async function attemptSucceeded(db: Db, attempt: Attempt): Promise<void> {
  await db.execute('update sign_in_attempts set succeeded = true where id = ?', [attempt.id]);
}

/**
 * After a password reset the owner has proven control of the account: a success recorded for it lifts the account's
 * lock (failures before the last success do not count). The address keeps its count.
 */
export async function clearAccountLock(db: Db, email: string, ip: string, now: Date): Promise<void> {
  await db.execute('insert into sign_in_attempts (email, ip, succeeded, created_at) values (?, ?, true, ?)', [email, ip, now]);
}
