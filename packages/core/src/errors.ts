import { ERROR_CATALOGUE, type ErrorCode, type ErrorDetails } from './errors/catalogue.ts';

export { ERROR_CATALOGUE, ERROR_CODES, codes, type ErrorCode, type ErrorDetails, isErrorCode, statusOfCode } from './errors/catalogue.ts';

/** A code's details are required when its catalogue schema has a required field, and cannot be given when it has none. */
export type DetailsArgs<C extends ErrorCode> =
  ErrorDetails<C> extends undefined
    ? [details?: undefined, cause?: unknown]
    : Record<string, never> extends ErrorDetails<C>
      ? [details?: ErrorDetails<C>, cause?: unknown]
      : [details: ErrorDetails<C>, cause?: unknown];

/** The codes the catalogue answers with status `S`. */
export type CodeWithStatus<S extends number> = { [C in ErrorCode]: (typeof ERROR_CATALOGUE)[C]['status'] extends S ? C : never }[ErrorCode];

/**
 * The one error model: a stable machine `code` from the catalogue (errors/catalogue.ts), the HTTP status the catalogue
 * gives it and a human message (the catalogue's unless a more specific one is given). Services throw AppError; the
 * HTTP layer turns any error into `{ error, code, ...details }` through `toPublicError`, the only mapping there is.
 */
export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly status: number;
  readonly details: Record<string, unknown>;
  /** Response headers that belong to the error itself (e.g. `retry-after` on a 503). */
  headers: Readonly<Record<string, string>> = {};

  constructor(code: C, message?: string, ...[details, cause]: DetailsArgs<C>) {
    const { status } = ERROR_CATALOGUE[code];
    // A client error is an answer, not a fault: nothing logs its stack, and capturing one was about 8% of the server's
    // time when refusing a key over its limit. Server errors keep theirs for the log.
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(message ?? ERROR_CATALOGUE[code].message, cause === undefined ? undefined : { cause });
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = details ?? {};
  }
}

export interface Issue {
  path: string;
  message: string;
}

/** Seconds a client is told to wait while the database is unreachable; reconnecting takes well under a second. */
export const RETRY_AFTER_UNAVAILABLE_S = 5;

export const errors = {
  unauthorized: (message?: string) => new AppError('unauthorized', message),
  wrongSurface: (message: string) => new AppError('wrong_api_surface', message),
  insufficientScope: (required: ErrorDetails<'insufficient_scope'>['required']) =>
    new AppError('insufficient_scope', `This API key lacks the permission ${required}`, { required }),
  notFound: (message: string) => new AppError('not_found', message),
  validation: (issues: Issue[], message?: string) => new AppError('validation_failed', message, { issues }),
  missingIdentity: () => new AppError('missing_identity'),
  rateLimited: (retryAfterSeconds: number) => new AppError('rate_limited', `Rate limit exceeded; retry in ${retryAfterSeconds} s`),
  contactLimitReached: () => new AppError('contact_limit_reached'),
  /** `createWith`: the route that creates a company on the surface the caller is on (its key may not reach the other). */
  companyNotFound: (domain: string, createWith = 'POST /v1/companies/upsert') =>
    new AppError('company_not_found', `No company with domain ${domain}; create it first with ${createWith}`, { domain }),
  idempotencyConflict: () => new AppError('idempotency_key_reused'),
  idempotencyInProgress: () => new AppError('idempotency_in_progress'),
  /** A write that failed on the database (timed out, lost its connection) and was rolled back; the spec's message for contacts. */
  saveFailed: (cause: unknown, message = 'Failed to save contact') => new AppError('save_failed', message, undefined, cause),
  /** The database is unreachable or the process is shutting down: a retry after `retry-after` seconds will do. */
  serviceUnavailable: (message?: string, retryAfterSeconds = RETRY_AFTER_UNAVAILABLE_S, cause?: unknown) =>
    Object.assign(new AppError('service_unavailable', message, undefined, cause), {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  // Errors of the HTTP edge, raised before a route runs: answered by the app's framework and client-error handlers.
  malformedUrl: (message?: string) => new AppError('malformed_url', message),
  badHttpRequest: () => new AppError('bad_request', 'The request is not valid HTTP'),
  requestTimeout: (message?: string) => new AppError('request_timeout', message),
  tooManyConnections: () => new AppError('too_many_connections'),
  headersTooLarge: () => new AppError('headers_too_large'),
};

export interface PublicError {
  status: number;
  body: { error: string; code: ErrorCode } & Record<string, unknown>;
  /** Headers the answer must carry, e.g. `retry-after` on 503 service_unavailable. */
  headers?: Readonly<Record<string, string>>;
}

/** Errors raised by the HTTP framework or the tRPC adapters before our code runs, by their own codes. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: ErrorCode; message?: string }> = {
  PARSE_ERROR: { status: 400, code: 'malformed_json', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'malformed_json', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'malformed_json',
    message: 'The request body is empty but Content-Type is application/json',
  },
  PAYLOAD_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'The request body is larger than 1 MB' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'The request body is larger than 1 MB' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'Send the body as JSON with Content-Type: application/json',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'Send the body as JSON with Content-Type: application/json',
  },
  JSON_TOO_DEEP: { status: 400, code: 'malformed_json', message: 'The request body is nested more than 64 levels deep' },
  INVALID_UTF8: { status: 400, code: 'malformed_json', message: 'The request body is not valid UTF-8; JSON must be sent as UTF-8' },
  UNSUPPORTED_CHARSET: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'JSON must be sent as UTF-8: drop the charset parameter or use charset=utf-8',
  },
  UNSUPPORTED_CONTENT_ENCODING: {
    status: 415,
    code: 'unsupported_content_encoding',
    message: 'Content-Encoding is not supported; send the body uncompressed (no Content-Encoding, or identity)',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'bad_request', message: 'Invalid Content-Length' },
  NOT_FOUND: { status: 404, code: 'not_found', message: 'No such endpoint' },
  METHOD_NOT_SUPPORTED: { status: 405, code: 'method_not_allowed' },
};

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
  /** On `unrecognized_keys` (a strict object): the keys it does not take. */
  code?: string;
  keys?: string[];
}

function isZodError(e: unknown): e is { issues: ZodLikeIssue[] } {
  return e instanceof Error && e.name === 'ZodError' && Array.isArray((e as { issues?: unknown }).issues);
}

/** Each unknown key of a strict object is named as its own path, so a client sees which field (or parameter) to drop. */
export function issuesFromZod(issues: ZodLikeIssue[]): Issue[] {
  return issues.flatMap((i) =>
    i.code === 'unrecognized_keys' && i.keys?.length
      ? i.keys.map((k) => ({ path: [...i.path, k].map(String).join('.'), message: `unknown field or parameter ${JSON.stringify(k)}` }))
      : [{ path: i.path.map(String).join('.'), message: i.message }],
  );
}

/**
 * Every error in `err`'s chain (causes, AggregateError members), depth-limited, for the predicates below.
 */
function someInChain(err: unknown, test: (e: Error) => boolean, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 8) return false;
  if (test(err)) return true;
  if (err instanceof AggregateError && err.errors.some((e) => someInChain(e, test, depth + 1))) return true;
  return someInChain(err.cause, test, depth + 1);
}

/** Node's network errors that mean "the database could not be reached", not "the statement was wrong". */
const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What node-postgres and its pool say when a connection is lost or cannot be had in time. */
const UNREACHABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Connection ended unexpectedly/i;

/**
 * A failure to reach PostgreSQL rather than a fault of the request or the code: a network error, SQLSTATE class 08
 * (connection exception), 57P01-57P03 (the server shutting down or starting up), 53300 (too many connections), or
 * node-postgres's own words for a lost connection. Searched through causes, wrappers such as save_failed and
 * AggregateError (one error per address tried) included.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  return someInChain(err, (e) => {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (UNREACHABLE_ERRNO.has(code) || /^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '53300')
    ) {
      return true;
    }
    return e.name === 'ConnectionException' || UNREACHABLE_MESSAGE.test(e.message);
  });
}

/** Errors of setting a connection up (refused, no such host, server starting, too many connections): nothing ran yet. */
const CONNECT_ERRNO = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '53300']);

/**
 * No connection could be had within the acquire time-out (or at all): nothing was attempted, a retry later will do. A
 * connection lost while a statement ran is not this: that write was attempted (and rolled back).
 */
export const isNoConnection = (err: unknown): boolean =>
  someInChain(err, (e) => {
    const code = (e as { code?: unknown }).code;
    return (
      e.name === 'DatabaseUnavailableError' ||
      (typeof code === 'string' && CONNECT_ERRNO.has(code)) ||
      /timeout exceeded when trying to connect/i.test(e.message)
    );
  });

/**
 * SQLSTATEs of a statement cut short by a time-out: statement_timeout (57014 query_canceled), lock_timeout (55P03),
 * idle_in_transaction_session_timeout (25P03), transaction_timeout (25P04).
 */
const TIMEOUT_SQLSTATE = new Set(['57014', '55P03', '25P03', '25P04']);

/**
 * The database failed the request rather than the request being wrong: unreachable, lost mid-way, or out of time (on
 * either side). A write that meets this was rolled back: 500 save_failed; a read is 503.
 */
export function isDatabaseFailure(err: unknown): boolean {
  return (
    isNoConnection(err) ||
    isDatabaseUnreachable(err) ||
    someInChain(err, (e) => {
      const code = (e as { code?: unknown }).code;
      return (
        e.name === 'DatabaseTimeoutError' || e.message === 'Query read timeout' || (typeof code === 'string' && TIMEOUT_SQLSTATE.has(code))
      );
    })
  );
}

/** The spec's application message for a contact save that failed ("timeout or server error"). */
const CONTACT_SAVE_FAILED = 'Failed to save contact';

/**
 * What a write that failed on the database is answered: save_failed naming what was being saved ("Failed to save
 * contact", the spec's words, for contacts; "Failed to save" otherwise); for want of a connection, 503 (toPublicError's
 * answer) with the spec's words for contacts; or nothing to change (an answer already chosen, such as a 4xx or
 * save_failed; not a database failure).
 */
export function writeFailure(err: unknown, resource: string | undefined): AppError | undefined {
  const contact = resource === 'contacts';
  // No connection within the acquire time-out: nothing was attempted, so 503 with retry-after stays the right answer,
  // but a contact save says what the spec says of one that timed out.
  if (isNoConnection(err))
    return contact && presentError(err).status >= 500 ? errors.serviceUnavailable(CONTACT_SAVE_FAILED, undefined, err) : undefined;
  if (!isDatabaseFailure(err)) return undefined;
  const pub = presentError(err);
  if (pub.status !== 500 || pub.body.code !== 'internal_error') return undefined;
  return errors.saveFailed(err, contact ? CONTACT_SAVE_FAILED : 'Failed to save');
}

const fromAppError = (e: AppError): PublicError => ({
  status: e.status,
  body: { error: e.message, code: e.code, ...e.details },
  ...(Object.keys(e.headers).length ? { headers: e.headers } : {}),
});

/**
 * Walks an error and its causes to the most specific thing we know how to present. A server-side failure for want of a
 * database connection is a 503 service_unavailable with retry-after, so that clients can tell an outage from a bug; so
 * is any other database failure (unreachable, out of time), except a write's save_failed: the write was attempted and
 * rolled back, and the spec answers it `Failed to save contact`.
 */
export function toPublicError(err: unknown): PublicError {
  const pub = presentError(err);
  if (pub.status < 500 || pub.status === 503) return pub;
  if (isNoConnection(err)) return fromAppError(errors.serviceUnavailable());
  if (pub.body.code === 'save_failed') return pub;
  return isDatabaseFailure(err) ? fromAppError(errors.serviceUnavailable()) : pub;
}

function presentError(err: unknown): PublicError {
  let serverFault = false;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof AppError) return fromAppError(e);
    // A zod error under an internal error is our response failing its own output schema: the server's fault.
    serverFault ||= (e as { code?: unknown }).code === 'INTERNAL_SERVER_ERROR';
    if (isZodError(e) && !serverFault) {
      const issues = issuesFromZod(e.issues);
      const first = issues[0];
      const message = first ? `Validation failed: ${first.path ? `${first.path}: ` : ''}${first.message}` : 'Validation failed';
      return { status: 400, body: { error: message, code: 'validation_failed', issues } };
    }
  }
  const code = (err as { code?: unknown } | null)?.code;
  const known = typeof code === 'string' && !serverFault ? FRAMEWORK_ERRORS[code] : undefined;
  if (known) {
    const message = known.message ?? (err instanceof Error ? err.message : known.code);
    return { status: known.status, body: { error: message, code: known.code } };
  }
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: { error: 'Bad request', code: 'bad_request' } };
  }
  return { status: 500, body: { error: 'Internal server error', code: 'internal_error' } };
}
