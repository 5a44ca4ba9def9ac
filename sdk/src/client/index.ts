import { batchUpsert, type BatchUpsertOptions } from './batch.ts';
import { type CallOptions, DEFAULTS, send, type Transport, wait } from './http.ts';
import { type Page, type Paged, paged } from './pages.ts';
import type {
  BatchRowResult,
  CompanyRecord,
  CompanySearchQuery,
  CompanyUpsertInput,
  CompanyUpsertResult,
  Contact,
  ContactDetail,
  ContactRecord,
  ContactSearchQuery,
  ContactUpsertInput,
  ContactUpsertResult,
  EventListOptions,
  EventPage,
  FeedEvent,
  ListOptions,
  LeadInput,
  LeadResult,
  Note,
  NoteInput,
} from './types.ts';

/** What `createClient` takes. */
export interface ClientOptions {
  /** The API root: the server's origin plus `/api`, e.g. `https://crm.example.com/api` or `http://localhost:3000/api`. */
  baseUrl: string;
  /** A Public API key (`ck_live_...`) with the permissions of the calls you make. */
  apiKey: string;
  /** The fetch to use. Default: the global `fetch` (Node 20+, browsers, Deno, Bun, edge runtimes). */
  fetch?: typeof fetch;
  /** Retries after the first attempt of a call (429, 5xx, network errors, time-outs). Default 2; 0 turns retries off. */
  maxRetries?: number;
  /** Time-out of each attempt, until the whole answer is read, in milliseconds. Default 30,000. */
  timeoutMs?: number;
  /**
   * Advanced: how the client waits before a retry. It gets the delay in milliseconds and the call's `signal`, if any.
   * Default: a timer that the signal cancels. Tests pass their own to observe the delays or to move a fake clock
   * instead of waiting; an application can pass one that logs each wait.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The typed client of the public API v1, made by {@link createClient}. Every method rejects with a `LeadwireError`. */
export interface LeadwireClient {
  /** Contacts: list, get, look up, upsert one or many, add notes. */
  contacts: {
    /**
     * Every live contact, oldest change first (`updatedAt`, then `id`), paged for you (GET /v1/contacts;
     * `contacts:read`): `for await (const c of lw.contacts.list())`. A contact changed while you page comes again
     * later, so a walk to the end misses no change. Save `.cursor` to resume; `.pages()` yields whole pages.
     */
    list(opts?: ListOptions): Paged<ContactRecord>;
    /**
     * One contact by id, with its consent by purpose (GET /v1/contacts/{id}; `contacts:read`). Unknown, trashed or
     * another workspace's: 404 `not_found`.
     */
    get(id: string, opts?: CallOptions): Promise<ContactDetail>;
    /** Looks a contact up by email (GET /v1/contacts/search; `contacts:read`). A contact not found is a 404 `not_found`. */
    search(query: ContactSearchQuery, opts?: CallOptions): Promise<Contact>;
    /** Creates or updates one contact, matched on its email or on name and company (POST /v1/contacts/upsert; `contacts:write`). */
    upsert(body: ContactUpsertInput, opts?: CallOptions): Promise<ContactUpsertResult>;
    /**
     * Upserts any number of contacts, 100 a request with a few requests at once (POST /v1/contacts/batch-upsert;
     * `contacts:write`). Resolves to one result per row, in the rows' order. A chunk that fails as a whole after its
     * retries marks its rows failed with the chunk's error; 401 and 403 reject instead.
     */
    batchUpsert(rows: readonly ContactUpsertInput[], opts?: BatchUpsertOptions): Promise<BatchRowResult[]>;
    /** Adds a note to a contact (POST /v1/contacts/{id}/notes; `notes:write`). */
    addNote(contactId: string, body: NoteInput, opts?: CallOptions): Promise<Note>;
  };
  /** Companies, matched on their domain. */
  companies: {
    /**
     * Every company, oldest change first (`updatedAt`, then `id`), paged for you (GET /v1/companies;
     * `companies:read`). Save `.cursor` to resume; `.pages()` yields whole pages.
     */
    list(opts?: ListOptions): Paged<CompanyRecord>;
    /** One company by id (GET /v1/companies/{id}; `companies:read`). Not found: 404 `not_found`. */
    get(id: string, opts?: CallOptions): Promise<CompanyRecord>;
    /** The company of a domain, normalised as upserts do (`https://www.Example.com/x` is `example.com`) (GET /v1/companies/search; `companies:read`). Not found: 404 `not_found`. */
    search(query: CompanySearchQuery, opts?: CallOptions): Promise<CompanyRecord>;
    /** Creates or updates a company, matched on its normalised domain (POST /v1/companies/upsert; `companies:write`). */
    upsert(body: CompanyUpsertInput, opts?: CallOptions): Promise<CompanyUpsertResult>;
  };
  /** Leads: contacts placed on a pipeline. */
  leads: {
    /** Upserts a contact and places it on a pipeline (POST /v1/leads; `leads:write`). */
    create(body: LeadInput, opts?: CallOptions): Promise<LeadResult>;
  };
  /** The changes feed: every event of the workspace in commit order, delivered or not. */
  events: {
    /**
     * The events after `after`, paged for you, until caught up (GET /v1/events; `events:read`, or `contacts:read` for
     * the `contact.*` events): the loop ends when the feed has nothing more now. Save `.cursor` after handling each
     * event and pass it back as `after` later (the next poll, or after a restart): the new loop starts with the very
     * next event, none repeated, none skipped. `.pages()` yields `{ items, nextCursor, hasMore }`.
     */
    list(opts?: EventListOptions): Paged<FeedEvent, EventPage>;
  };
}

/**
 * Creates a client of the public API v1. Calls are retried on 429 (after `retry-after`), 5xx, network errors and
 * time-outs; every write carries an `Idempotency-Key` that stays the same across its retries, so none is applied twice.
 */
export function createClient(options: ClientOptions): LeadwireClient {
  // Plain JavaScript callers get a clear message for the usual slip (an unset environment variable), not a TypeError deep inside.
  for (const name of ['baseUrl', 'apiKey'] as const) {
    if (typeof options[name] !== 'string' || !options[name])
      throw new TypeError(`createClient needs ${name} (see the README's quick start)`);
  }
  const t: Transport = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    // Called through a closure: a browser's fetch refuses to run with another `this`.
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    sleep: options.sleep ?? wait,
  };
  // A GET of a listing page: undefined options are left out of the query.
  const list = <P extends Page<{ id: string }>>(path: string, key: 'cursor' | 'after', o: ListOptions & EventListOptions) =>
    paged<P['items'][number], P>((at) => {
      const q: Record<string, string> = { limit: String(o.limit ?? DEFAULTS.pageSize) };
      // An empty `types` is no filter, as an absent one: the API refuses `types=`.
      for (const k of ['updatedSince', 'types'] as const) if (o[k]?.length) q[k] = String(o[k]);
      if (at !== undefined) q[key] = at;
      return send(t, 'GET', `${path}?${new URLSearchParams(q).toString()}`, undefined, o);
    }, o[key]);
  const one = <R>(path: string, opts?: CallOptions) => send<R>(t, 'GET', path, undefined, opts);
  return {
    contacts: {
      list: (opts = {}) => list<Page<ContactRecord>>('/v1/contacts', 'cursor', opts),
      get: (id, opts) => one(`/v1/contacts/${encodeURIComponent(id)}`, opts),
      search: (query, opts) => send(t, 'GET', `/v1/contacts/search?${new URLSearchParams(query).toString()}`, undefined, opts),
      upsert: (body, opts) => send(t, 'POST', '/v1/contacts/upsert', body, opts),
      batchUpsert: (rows, opts) => batchUpsert(t, rows, opts),
      addNote: (contactId, body, opts) => send(t, 'POST', `/v1/contacts/${encodeURIComponent(contactId)}/notes`, body, opts),
    },
    companies: {
      list: (opts = {}) => list<Page<CompanyRecord>>('/v1/companies', 'cursor', opts),
      get: (id, opts) => one(`/v1/companies/${encodeURIComponent(id)}`, opts),
      search: (query, opts) => one(`/v1/companies/search?${new URLSearchParams(query).toString()}`, opts),
      upsert: (body, opts) => send(t, 'POST', '/v1/companies/upsert', body, opts),
    },
    leads: { create: (body, opts) => send(t, 'POST', '/v1/leads', body, opts) },
    events: { list: (opts = {}) => list<EventPage>('/v1/events', 'after', opts) },
  };
}

export { DEFAULTS };
export type { BatchProgress, BatchUpsertOptions } from './batch.ts';
export type { CallOptions } from './http.ts';
export type { Page, Paged } from './pages.ts';
