import type { Db } from '@leadwire/db';
import { accountErrors } from './errors.ts';

const HOUR_MS = 3_600_000;

/** Fixed hourly windows shared by every server, in the table the other per-window limits use (cleaned by jobs/cleanup.ts). */
const COUNT = `
insert into rate_limit_counters (bucket, window_start, count) values (?, ?::timestamptz, 1)
on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
returning count`;

/** What an address may do per hour without an account: sign up, and ask for password reset emails. */
export type AddressAction = 'sign-up' | 'password-reset';

/**
 * Counts one `action` from `ip` in the current hour and refuses beyond `perHour` with 429 `rate_limited` and the seconds
 * to the next hour. Counted before anything is looked up, whatever the outcome, so a taken email costs a stranger as
 * much of the budget as a new one: an address learns at most `perHour` times an hour whether an email is registered.
 */
export async function spendAddressBudget(db: Db, action: AddressAction, ip: string, perHour: number, now: Date): Promise<void> {
  const start = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  const [row] = await db.execute<{ count: number }[]>(COUNT, [`${action}:${ip}`, start]);
  if ((row?.count ?? 1) > perHour) {
    throw accountErrors.addressLimited(action, Math.max(1, Math.ceil((start.getTime() + HOUR_MS - now.getTime()) / 1000)));
  }
}
