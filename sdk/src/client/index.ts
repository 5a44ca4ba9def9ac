import { batchUpsert, type BatchUpsertOptions } from './batch.ts';
import { type CallOptions, DEFAULTS, send, type Transport, wait } from './http.ts';
import type {
  BatchRowResult,
  CompanyUpsertInput,
  CompanyUpsertResult,
  Contact,
  ContactSearchQuery,
  ContactUpsertInput,
  ContactUpsertResult,
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
  /** Contacts: look up, upsert one or many, add notes. */
  contacts: {
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
    /** Creates or updates a company, matched on its normalised domain (POST /v1/companies/upsert; `companies:write`). */
    upsert(body: CompanyUpsertInput, opts?: CallOptions): Promise<CompanyUpsertResult>;
  };
  /** Leads: contacts placed on a pipeline. */
  leads: {
    /** Upserts a contact and places it on a pipeline (POST /v1/leads; `leads:write`). */
    create(body: LeadInput, opts?: CallOptions): Promise<LeadResult>;
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
  return {
    contacts: {
      search: (query, opts) => send(t, 'GET', `/v1/contacts/search?${new URLSearchParams(query).toString()}`, undefined, opts),
      upsert: (body, opts) => send(t, 'POST', '/v1/contacts/upsert', body, opts),
      batchUpsert: (rows, opts) => batchUpsert(t, rows, opts),
      addNote: (contactId, body, opts) => send(t, 'POST', `/v1/contacts/${encodeURIComponent(contactId)}/notes`, body, opts),
    },
    companies: { upsert: (body, opts) => send(t, 'POST', '/v1/companies/upsert', body, opts) },
    leads: { create: (body, opts) => send(t, 'POST', '/v1/leads', body, opts) },
  };
}

export { DEFAULTS };
export type { BatchProgress, BatchUpsertOptions } from './batch.ts';
export type { CallOptions } from './http.ts';
