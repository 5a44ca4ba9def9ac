import { randomUUID } from 'node:crypto';
import { type DB, type Db, type Expression, jsonRows, qb, type Selectable, statement } from '@leadwire/db';
import { currentRequestId } from '../http/request-scope.ts';
import { announceAfterCommit } from './written.ts';
import type { EventName } from './names.ts';

/** Who made a change (spec "Payload shape"): lets receivers ignore changes their own integration made. */
export const EVENT_SOURCES = ['app', 'api', 'zapier', 'import', 'sync', 'automation', 'ai', 'inbound', 'system', 'partner'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

export interface PendingEvent {
  orgId: string;
  /** A name of the catalogue (names.ts), so a misspelt event fails typecheck. */
  event: EventName;
  source: EventSource | null;
  data: Record<string, unknown>;
  /** When the change happened, from `deps.clock` (the same instant the change's own rows were stamped with). */
  at: Date;
}

export interface EventPayload {
  /** The outbox row's id: the same in every attempt, redelivery, recovery, the changes feed and listen streams. */
  id: string;
  event: EventName;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  source?: EventSource;
  data: Record<string, unknown>;
}

export function buildPayload(e: PendingEvent, id: string): EventPayload {
  return {
    id,
    event: e.event,
    timestamp: e.at.toISOString(),
    ...(e.source ? { source: e.source } : {}),
    data: e.data,
  };
}

/** The columns an event is written with. */
export const EVENT_COLUMNS = [
  'id',
  'organization_id',
  'event',
  'payload',
  'created_at',
  'request_id',
] as const satisfies readonly (keyof Selectable<DB['outbox_events']>)[];

/**
 * The events of `json` (an `eventRowsParam` string, or a statement's parameter standing for one) as the select of an
 * `insert into outbox_events`; with `onlyIf`, only when that query returns a row (e.g. `select 1 from written` of a
 * CTE whose write the events describe). For statements that fold the events into one of their own:
 *
 *   qb.with('written', ...).insertInto('outbox_events').columns(EVENT_COLUMNS)
 *     .expression((eb) => eventRows(p.events, eb.selectFrom('written').select(sql.lit(1).as('one'))))
 */
export function eventRows(json: unknown, onlyIf?: Expression<unknown>) {
  const rows = qb.selectFrom(jsonRows('outbox_events', json).as('v')).select(EVENT_COLUMNS.map((c) => `v.${c}` as const));
  return onlyIf ? rows.where((eb) => eb.exists(onlyIf)) : rows;
}

/** `insert into outbox_events` of the events of `json`: one statement however many events. */
export const insertEvents = (json: unknown) => qb.insertInto('outbox_events').columns(EVENT_COLUMNS).expression(eventRows(json));

const INSERT_EVENTS = statement<{ events: string }>()((p) => insertEvents(p.events));

/**
 * Writes events to the outbox on the caller's database handle: inside a transaction they commit or roll back with the
 * change they describe. One statement however many events.
 */
export async function emitEvents(db: Db, events: readonly PendingEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.run(INSERT_EVENTS, { events: eventRowsParam(events) });
  await announceAfterCommit(db);
}

/** The one parameter of `insertEvents` / `eventRows`, for callers that fold the insert into a statement of their own. */
export function eventRowsParam(events: readonly PendingEvent[]): string {
  // The request writing them, if any (request-scope.ts): kept with each event for its deliveries and their log lines.
  const request_id = currentRequestId() ?? null;
  return JSON.stringify(
    events.map((e) => {
      const id = randomUUID();
      const payload = buildPayload(e, id);
      return { id, organization_id: e.orgId, event: e.event, payload, created_at: payload.timestamp, request_id };
    }),
  );
}
