import { qb, sql, statement, type Db } from '@leadwire/db';
import { LRUCache } from 'lru-cache';
import { refusals } from '../metrics/registry.ts';
import { accountErrors } from './errors.ts';

const HOUR_MS = 3_600_000;

/** Fixed hourly windows shared by every server, in the table the other per-window limits use (cleaned by jobs/cleanup.ts). */
const COUNT = statement<{ bucket: string; window: Date }>()((p) =>
  qb
    .insertInto('rate_limit_counters')
    .values({ bucket: p.bucket, window_start: sql<Date>`${p.window}::timestamptz`, count: sql.lit(1) })
    .onConflict((oc) =>
      oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: eb(eb.ref('rate_limit_counters.count'), '+', sql.lit(1)) })),
    )
    .returning('count'),
);

/** What an address may do per hour without an account: sign up, and ask for password reset emails. */
export type AddressAction = 'sign-up' | 'password-reset';

/**
 * Counts one `action` from `ip` in the current hour and refuses beyond `perHour` with 429 `rate_limited` and the seconds
 * to the next hour. Counted before anything is looked up, whatever the outcome, so a taken email costs a stranger as
 * much of the budget as a new one: an address learns at most `perHour` times an hour whether an email is registered.
 */
export async function spendAddressBudget(db: Db, action: AddressAction, ip: string, limit: AddressLimit, now: Date): Promise<void> {
  const { perHour, spent } = limit;
  const bucket = `${action}:${ip}`;
  const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const refuse = () => {
    refusals.inc({ reason: 'address_limited' });
    return accountErrors.addressLimited(action, Math.max(1, Math.ceil((start + HOUR_MS - now.getTime()) / 1000)));
  };
  if ((spent.peek(bucket) ?? 0) > now.getTime()) throw refuse();
  const [row] = await db.run(COUNT, { bucket, window: new Date(start) });
  if ((row?.count ?? 1) > perHour) {
    spent.set(bucket, start + HOUR_MS);
    throw refuse();
  }
}

/** An address budget per hour, with the app's memory of the budgets the database already found spent. */
export interface AddressLimit {
  perHour: number;
  /**
   * Budget (action and address) to the end of its hour, for budgets the database found spent: a flood from one
   * address is then refused from memory, with no write to the shared counter row (which every refusal bumped, so the
   * flood's requests queued on its lock). A budget never comes back within its hour, so the memory can only repeat the
   * database's answer. Bounded like the key guard's tables: the least recently set entry goes first. Its expiry is the
   * hour's end kept in the entry and compared with the caller's `now` (from the app's clock).
   */
  spent: LRUCache<string, number>;
}

const MAX_SPENT = 10_000;
const memories = new WeakMap<object, LRUCache<string, number>>();

/**
 * `perHour` with the running app's memory (keyed by its Deps, like the key guard), so two apps in one process (as in
 * the tests) never answer one's spent budget for the other.
 */
export function addressLimit(deps: object, perHour: number): AddressLimit {
  let spent = memories.get(deps);
  if (!spent) memories.set(deps, (spent = new LRUCache({ max: MAX_SPENT })));
  return { perHour, spent };
}
