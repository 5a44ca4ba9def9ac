import { PUBLIC_PERMISSIONS } from '@leadwire/db';
import { AppError, type ErrorCode, errors } from '../errors.ts';

/** What an example needs to read like the operation it is shown on. */
export interface ExampleContext {
  permission: string;
  /** A request field the validation example can blame. */
  field: string;
  /** The message of a not_found on this operation. */
  notFound: string;
}

/**
 * When each code is answered, for the response descriptions; a code without an entry is described by its catalogue
 * message. The wording is for partners: what happened and what to do.
 */
export const WHEN: Partial<Record<ErrorCode, string>> = {
  validation_failed: 'the body, the query, the path or a header (`X-Source`, `Idempotency-Key`) is invalid; `issues` lists every problem',
  missing_identity: 'neither an email nor companyDomain together with firstName and lastName was sent',
  malformed_json: 'the body is not valid JSON or not UTF-8, or is empty while `Content-Type` is `application/json`',
  unauthorized: 'the credential is missing, malformed, unknown, revoked or expired, or its owner was deactivated or changed their password',
  wrong_api_surface:
    'the credential belongs to the other surface: /v1 takes Public API keys only, the application API sessions and Internal keys',
  insufficient_scope: 'the key lacks the permission this operation needs; `required` names it',
  contact_limit_reached: "the organization's plan contact cap is reached; no contact was created",
  forbidden_role: 'the signed-in user lacks the role this action needs; `required` names the roles that may',
  not_found: 'no matching record in your organization',
  idempotency_key_reused: 'the `Idempotency-Key` was already used by this API key with a different request',
  idempotency_in_progress: 'a request with this `Idempotency-Key` is still running; retry it shortly',
  payload_too_large: 'the body is larger than the limit (1 MB)',
  unsupported_media_type: 'the body is not sent as `application/json`, or `Content-Type` is missing',
  unsupported_content_encoding: 'the body was sent with a `Content-Encoding` (compression is not supported; send it uncompressed)',
  company_not_found:
    'the company named (by domain on /v1, by id on the application API) does not exist in the organization; create it first',
  company_exists: 'a company with this domain (as normalised) already exists; `existingCompanyId` names it, open or update that one',
  invalid_cursor: 'the cursor is not one this list returned (or was made for another sort or order); start again without one',
  rate_limited: 'the credential or your address made more requests than its limit allows in the current window; wait `retry-after` seconds',
  too_many_connections:
    'your address holds more open connections than the server allows per address; close or reuse some, then retry (no `x-ratelimit-*` headers: no key was looked at)',
  internal_error: 'an unexpected failure on our side; retrying (with the same `Idempotency-Key`) is safe',
  save_failed:
    'the write could not finish on the database in time, or lost its connection, and was rolled back (`Failed to save contact` for contacts, `Failed to save` otherwise); retrying with the same `Idempotency-Key` is safe',
  malformed_url:
    'the path or query string is not valid percent-encoded UTF-8 (e.g. `%zz` in a path parameter, `?q=%FF`); encode it, a raw `+` included',
  bad_request: 'the request is not valid HTTP (e.g. an invalid `Content-Length`)',
  request_timeout:
    'the request line, headers or body did not arrive within the time-outs (`HTTP_HEADERS_TIMEOUT_MS`, `HTTP_REQUEST_TIMEOUT_MS`), or the body arrived more slowly than `HTTP_BODY_MIN_RATE_BYTES_PER_S` after `HTTP_BODY_GRACE_MS` or stopped for `HTTP_BODY_IDLE_TIMEOUT_MS`; the connection is closed',
  headers_too_large: 'the request line and headers together exceed 16 KB (a very long query string counts); the connection is closed',
  service_unavailable:
    'the database is briefly unreachable, this server is shutting down, or it is at its connection limit and closed this slow request to make room; nothing was saved, retry after `retry-after` seconds (with the same `Idempotency-Key`); a contact write that got no database connection in time says `Failed to save contact`',
};

/**
 * Codes answered only once the credential was recognised: on /v1 the rate-limit headers are always on them. The rest
 * can be answered before (at the edge, by the body parser, or refusing the credential itself).
 */
export const AFTER_AUTH: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'validation_failed',
  'missing_identity',
  'insufficient_scope',
  'contact_limit_reached',
  'not_found',
  'idempotency_key_reused',
  'idempotency_in_progress',
  'company_not_found',
  'rate_limited',
  'save_failed',
]);

/** Codes whose answer always carries `retry-after`. */
export const SENDS_RETRY_AFTER: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'rate_limited',
  'too_many_attempts',
  'service_unavailable',
  'captcha_unavailable',
]);

/** A real error of each code, as the server builds it, for the examples. */
export function sampleError(code: ErrorCode, ctx: ExampleContext): AppError {
  switch (code) {
    case 'validation_failed':
      return errors.validation(
        [{ path: ctx.field, message: 'Invalid input: expected string, received number' }],
        `Validation failed: ${ctx.field}: Invalid input: expected string, received number`,
      );
    case 'insufficient_scope':
      return errors.insufficientScope(PUBLIC_PERMISSIONS.find((p) => p === ctx.permission) ?? 'contacts:read');
    case 'not_found':
      return errors.notFound(ctx.notFound || 'No record with id 3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10');
    case 'unauthorized':
      return errors.unauthorized('Invalid, revoked or expired API key');
    case 'company_not_found':
      return errors.companyNotFound('example.com');
    case 'rate_limited':
      return errors.rateLimited(17);
    case 'save_failed':
      return errors.saveFailed(new Error('timeout'));
    case 'forbidden_role':
      return new AppError('forbidden_role', 'This action needs the owner or admin role', { required: ['owner', 'admin'] });
    case 'restore_window_expired':
      return new AppError('restore_window_expired', undefined, { deletedAt: '2026-01-01T00:00:00.000Z' });
    case 'webhook_url_refused':
      return new AppError('webhook_url_refused', undefined, { reason: 'the host resolves to a private address' });
    case 'hook_url_refused':
      return new AppError(code, undefined, { reason: 'intranet.example.com resolves to 10.1.2.3 is in the private range' });
    case 'pipeline_has_deals':
    case 'stage_has_deals':
      return new AppError(code, undefined, { deals: 3 });
    case 'stage_has_leads':
      return new AppError(code, undefined, { leads: 3 });
    case 'ai_action_already_decided':
      return new AppError(code, 'This AI action was already accepted', { status: 'accepted' });
    case 'file_too_large':
      return new AppError(code, 'A contact photo is limited to 5 MB', { maxBytes: 5 * 1024 * 1024 });
    case 'unsupported_file_type':
      return new AppError(code, undefined, { accepted: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] });
    case 'stage_not_in_pipeline':
      return new AppError(code, undefined, {
        stageId: '0b7a6c1e-2f4d-4e8a-9c3b-5d6e7f8a9b0c',
        pipelineId: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10',
      });
    case 'invalid_stage_order':
      return new AppError(code, undefined, { stageIds: ['0b7a6c1e-2f4d-4e8a-9c3b-5d6e7f8a9b0c'] });
    case 'file_infected':
      return new AppError(code, 'The file was refused: the virus scanner found Eicar-Signature', { signature: 'Eicar-Signature' });
    case 'pipeline_not_found':
      return new AppError(code, undefined, { pipelineId: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10' });
    case 'too_many_attempts':
      return new AppError(code, 'Too many failed sign-in attempts; try again in 30 s', { retryAfter: 30 });
    default:
      return new AppError(code);
  }
}
