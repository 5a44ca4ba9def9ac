import type { Issue, Permission } from './types.ts';

/** What a {@link LeadwireError} is made of: its fields, and `cause`, the lower error (fetch's, on `network_error`). */
export interface LeadwireErrorInit {
  status: number;
  code: string;
  message: string;
  required?: Permission;
  retryAfter?: number;
  issues?: Issue[];
  requestId?: string;
  cause?: unknown;
}

/**
 * The one error the /v1 client throws for a failed call: an error answer of the API (after any retries), a network
 * failure or a time-out. Branch on `code`, which is stable; `message` is for people.
 */
export class LeadwireError extends Error {
  /** The HTTP status; 0 when no answer arrived (`network_error`, `timeout`). */
  readonly status: number;
  /**
   * The API's error code (`validation_failed`, `unauthorized`, `insufficient_scope`, `not_found`,
   * `idempotency_key_reused`, `company_not_found`, `rate_limited`, ...), or `network_error` / `timeout` when no answer
   * arrived, or `unexpected_response` when the answer was not the API's JSON error (e.g. a proxy's HTML page).
   */
  readonly code: string;
  /** On `insufficient_scope`: the permission the API key lacks. */
  readonly required?: Permission;
  /** On 429 (and 503): the server's `retry-after`, in seconds. */
  readonly retryAfter?: number;
  /** On `validation_failed`: every problem found, with where it is. */
  readonly issues?: Issue[];
  /** The server's `x-request-id` for the failed answer: quote it when asking for help. */
  readonly requestId?: string;

  /** Built by the client; exported so that callers can use `instanceof`. */
  constructor(init: LeadwireErrorInit) {
    super(init.message, { cause: init.cause });
    this.name = 'LeadwireError';
    this.status = init.status;
    this.code = init.code;
    this.required = init.required;
    this.retryAfter = init.retryAfter;
    this.issues = init.issues;
    this.requestId = init.requestId;
  }
}
