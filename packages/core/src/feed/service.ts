import { qb, sql, statement, type Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { AppError, errors } from '../errors.ts';
import { EVENT_GROUPS, type EventName } from '../events/names.ts';
import { decodeFeedCursor, encodeFeedCursor, type FeedPosition, laterOf } from './cursor.ts';
import type { FeedListInput, FeedListOutput } from './schemas.ts';
import { FEED_PAGE, FEED_PAGE_OF_TYPES } from './sql.ts';

/** The permission that reads every event; the one a refusal names. */
export const FEED_PERMISSION = 'events:read';
/** Reads the contact events only: a partner syncing contacts needs their deletes and merges, not deals or messages. */
export const CONTACT_FEED_PERMISSION = 'contacts:read';

const CONTACT_EVENTS: readonly EventName[] = EVENT_GROUPS.Contacts;

/** Before every event ever written: xid8 0 is no transaction's id. */
const START: FeedPosition = { txid: '0', seq: '0' };

const HORIZON = statement<Record<never, never>>()(() =>
  qb.selectNoFrom(sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text`.as('horizon')),
);

export interface FeedOptions {
  /** The most rows a filtered page walks past (FEED_SCAN_WINDOW): its cost, however rare the matching events. */
  window: number;
}

/** The event names this key may read; null for every one. Refuses a `types` outside them, naming events:read. */
function readableTypes(actor: Actor, types: readonly EventName[] | undefined): readonly EventName[] | null {
  if (actor.permissions.includes(FEED_PERMISSION)) return types ?? null;
  if (!actor.permissions.includes(CONTACT_FEED_PERMISSION)) throw errors.insufficientScope(FEED_PERMISSION);
  if (types?.some((t) => !CONTACT_EVENTS.includes(t))) throw errors.insufficientScope(FEED_PERMISSION);
  return types ?? CONTACT_EVENTS;
}

function startOf(after: string | undefined): FeedPosition | 'now' {
  if (after === undefined) return START;
  if (after === 'now') return 'now';
  const p = decodeFeedCursor(after);
  if (!p) {
    throw new AppError(
      'invalid_cursor',
      'after is not a cursor this feed returned: pass nextCursor exactly as it was given, `now`, or nothing to start from the oldest event',
    );
  }
  return p;
}

type Row = { id: string | null; payload: unknown; txid: string | null; seq: string | null };
type Item = FeedListOutput['items'][number];

/** The stored payload as webhooks carry it, with the event's id first whether or not the stored payload has it. */
function itemOf(row: Row): Item {
  const p = row.payload as Omit<Item, 'id'>;
  return {
    id: row.id!,
    event: p.event,
    timestamp: p.timestamp,
    ...(p.source !== undefined ? { source: p.source } : {}),
    data: p.data,
  };
}

const positionOf = (row: Row): FeedPosition => ({ txid: row.txid!, seq: row.seq! });

/**
 * One page of the organization's changes feed after `input.after`. The page ends at `limit` events, at the end of the
 * window a filtered read may scan, or at the horizon (the oldest transaction still running); only in the last case is
 * the reader caught up (`hasMore: false`), and its cursor then moves to the horizon so an empty poll is not repeated
 * from further back than it needs to be.
 */
export async function listFeed(db: Db, actor: Actor, input: FeedListInput, opts: FeedOptions): Promise<FeedListOutput> {
  const types = readableTypes(actor, input.types);
  const start = startOf(input.after);
  if (start === 'now') {
    const [row] = await db.run(HORIZON, {});
    return { items: [], nextCursor: encodeFeedCursor({ txid: row!.horizon, seq: '0' }), hasMore: false };
  }
  const take = input.limit + 1;
  const base = { orgId: actor.orgId, txid: start.txid, seq: start.seq, take };
  const rows: (Row & { horizon: string; boundTxid?: string | null; boundSeq?: string | null })[] = types
    ? await db.run(FEED_PAGE_OF_TYPES, { ...base, window: opts.window, types: [...types] })
    : await db.run(FEED_PAGE, base);
  const found = rows.filter((r) => r.id !== null);
  const horizon = rows[0]!.horizon;
  if (found.length > input.limit) {
    const page = found.slice(0, input.limit);
    return { items: page.map(itemOf), nextCursor: encodeFeedCursor(positionOf(page.at(-1)!)), hasMore: true };
  }
  const bound = rows[0]!.boundTxid ? { txid: rows[0]!.boundTxid, seq: rows[0]!.boundSeq! } : null;
  if (bound) return { items: found.map(itemOf), nextCursor: encodeFeedCursor(bound), hasMore: true };
  return { items: found.map(itemOf), nextCursor: encodeFeedCursor(laterOf(start, { txid: horizon, seq: '0' })), hasMore: false };
}
