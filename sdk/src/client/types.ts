/**
 * The request and response types of the /v1 client, all taken from the types generated from the server's OpenAPI
 * document (../generated/v1.ts), never written by hand: a change of the contract changes them, and the contract test
 * fails until the generated file is refreshed.
 */
import type { components, operations } from '../generated/v1.ts';
import type { WebhookEvent } from '../webhooks.ts';

type JsonBody<O extends keyof operations> = operations[O] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type JsonResult<O extends keyof operations, S extends number> =
  operations[O]['responses'] extends Record<S, { content: { 'application/json': infer R } }> ? R : never;

/** One problem of a `validation_failed` error: `path` is a dotted body or query path (`tags.2`) or a header name. */
export type Issue = components['schemas']['Issue'];

/** A permission a Public API key can carry; a missing one is named in `LeadwireError.required`. */
export type Permission = components['schemas']['InsufficientScopeError']['required'];

/** The body of a contact upsert, and one row of a batch upsert. */
export type ContactUpsertInput = components['schemas']['ContactUpsertInput'];

/** The answer to a contact upsert: the contact's id, whether it was created, and what matched it when it was not. */
export type ContactUpsertResult = JsonResult<'contacts-upsert', 200>;

/** The query of a contact search. */
export type ContactSearchQuery = operations['contacts-search']['parameters']['query'];

/** The contact a search found. */
export type Contact = JsonResult<'contacts-search', 200>;

/** The body of a note. */
export type NoteInput = JsonBody<'notes-create'>;

/** A note as created. */
export type Note = JsonResult<'notes-create', 201>;

/** The body of a company upsert; companies are matched on their normalised domain. */
export type CompanyUpsertInput = JsonBody<'companies-upsert'>;

/** The answer to a company upsert. */
export type CompanyUpsertResult = JsonResult<'companies-upsert', 200>;

/** The body of a lead: a contact identity and its fields, plus the pipeline and score. */
export type LeadInput = JsonBody<'leads-create'>;

/** The answer to a lead: the contact and its place on the pipeline. */
export type LeadResult = JsonResult<'leads-create', 200>;

/** The server's answer to one batch-upsert request (internal: `batchUpsert` turns it into {@link BatchRowResult}s). */
export type BatchResponse = JsonResult<'contacts-batchUpsert', 200>;
type ServerRow = BatchResponse['results'][number];

/** A row of a batch that was saved; `index` is its position in the rows given to `batchUpsert`. */
export type BatchRowSuccess = Extract<ServerRow, { ok: true }>;

/**
 * A row of a batch that was not saved, with the reason: the server's per-row error, or, when its whole chunk failed,
 * the chunk's error (then `code` is e.g. `network_error`, `timeout`, `rate_limited` or `internal_error`).
 */
export interface BatchRowFailure {
  /** The row's position in the rows given to `batchUpsert`. */
  index: number;
  ok: false;
  error: {
    /** Stable machine identifier, e.g. `validation_failed`, `missing_identity`, `company_not_found`. */
    code: string;
    /** Human-readable message. */
    message: string;
    /** What was wrong with the row, on `validation_failed`. */
    issues?: Issue[];
  };
}

/** The outcome of one row of `batchUpsert`. */
export type BatchRowResult = BatchRowSuccess | BatchRowFailure;

/** A contact as the list returns it (`GET /v1/contacts`): the `data.contact` of contact events. */
export type ContactRecord = components['schemas']['ContactRecord'];

/**
 * A contact as `GET /v1/contacts/{id}` returns it: the `ContactRecord` plus `consent`, per purpose what holds now
 * (`consent.email_marketing?.status === 'granted'`); `{}` when none was asked. Read-only.
 */
export type ContactDetail = components['schemas']['ContactDetail'];

/** A company as the read routes return it (`GET /v1/companies`, `/companies/{id}`, `/companies/search`). */
export type CompanyRecord = components['schemas']['CompanyRecord'];

/** Options of `contacts.list` and `companies.list`. */
export interface ListOptions {
  /** Only records changed at or after this instant (ISO 8601, inclusive), e.g. the last `updatedAt` a previous sync saw. */
  updatedSince?: string;
  /** Records per request, 1-100. Default `DEFAULTS.pageSize` (100, the most the server allows: the fewest requests). */
  limit?: number;
  /** Where to start: a listing's saved `cursor`, or a page's `nextCursor`. Default: the first record. Keep the same `updatedSince`. */
  cursor?: string;
  /** Aborts the listing (the request in flight and its retries); the loop then throws the signal's reason. */
  signal?: AbortSignal;
}

/** The query of `companies.search`. */
export type CompanySearchQuery = operations['companies-search']['parameters']['query'];

/**
 * One event of the changes feed (`GET /v1/events`): exactly what its webhook delivery carries, so the same union
 * `verifyWebhook` returns (`switch (event.event)` narrows `data`), with the event's `id` to de-duplicate on.
 */
export type FeedEvent = WebhookEvent & { id: string };

/** Options of `events.list`. */
export interface EventListOptions {
  /**
   * Where to start: a listing's saved `cursor`, a page's `nextCursor`, or `now` (only events from now on). Default:
   * the oldest event kept.
   */
  after?: string;
  /** Only these events (names of the catalogue). Default: every event the key may read. */
  types?: readonly WebhookEvent['event'][];
  /** Events per request, 1-100. Default `DEFAULTS.pageSize` (100). */
  limit?: number;
  /** Aborts the listing (the request in flight and its retries); the loop then throws the signal's reason. */
  signal?: AbortSignal;
}

/**
 * One page of the changes feed: `items` in commit order; `nextCursor` (never null) where the next page starts, or
 * where to poll from later once caught up; `hasMore` true means call again now, false caught up.
 */
export type EventPage = Omit<JsonResult<'events-list', 200>, 'items'> & { items: FeedEvent[] };
