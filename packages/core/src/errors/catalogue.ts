import { PUBLIC_PERMISSIONS, ROLES } from '@leadwire/db';
import { z } from 'zod';

/**
 * Every error code the server answers with, once: its HTTP status, a default message and, for the codes whose body
 * carries more than `{ error, code }`, the schema of those fields. `AppError` is built from a key of this table only,
 * the OpenAPI documents publish it as shared components, and the contract tests hold the server to it.
 */

export const Issue = z
  .object({
    path: z.string().meta({
      description:
        'Where the problem is: a dotted body or query path (`tags.2`), a path parameter, or a header name; empty for the body as a whole.',
    }),
    message: z.string(),
  })
  .strict();

const count = z.int().min(0);
const retryAfter = z.int().min(1).meta({ description: 'Seconds to wait, as in `retry-after`.' });

/** The HTTP statuses an error can have, for the type of `status`. */
type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 410 | 413 | 415 | 422 | 429 | 431 | 500 | 503;

interface Entry {
  status: ErrorStatus;
  message: string;
  /** Fields the body carries besides `error` and `code`. */
  details?: z.ZodObject;
}

export const ERROR_CATALOGUE = {
  // 400: the request as sent cannot be processed.
  validation_failed: { status: 400, message: 'Validation failed', details: z.object({ issues: z.array(Issue) }) },
  missing_identity: { status: 400, message: 'A contact needs an email, or companyDomain together with firstName and lastName' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON' },
  malformed_url: { status: 400, message: 'The request path is not a valid URL (malformed percent-encoding?)' },
  bad_request: { status: 400, message: 'Bad request' },
  invalid_cursor: {
    status: 400,
    message: 'cursor is not one this list returned with the same sort and order; start again without a cursor',
  },
  invalid_token: { status: 400, message: 'This link is invalid, expired or already used' },
  malformed_multipart: { status: 400, message: 'The multipart body could not be read' },
  file_missing: { status: 400, message: 'No file in the request: send it in a multipart field named file' },
  captcha_failed: { status: 400, message: 'The CAPTCHA check failed' },
  // 401/403: who is asking, and may they.
  unauthorized: { status: 401, message: 'Missing or invalid API key' },
  invalid_credentials: { status: 401, message: 'Wrong email or password' },
  wrong_api_surface: { status: 403, message: 'This credential belongs to the other API surface' },
  insufficient_scope: {
    status: 403,
    message: 'This API key lacks a permission',
    details: z.object({ required: z.enum(PUBLIC_PERMISSIONS).meta({ description: 'The permission the key lacks.' }) }),
  },
  contact_limit_reached: { status: 403, message: 'Contact limit reached' },
  forbidden_role: {
    status: 403,
    message: 'This action needs another role',
    details: z.object({ required: z.array(z.enum(ROLES)).meta({ description: 'The roles that may do this.' }) }),
  },
  wrong_password: { status: 403, message: 'The password is incorrect' },
  user_deactivated: { status: 403, message: 'This account has been deactivated; ask an owner or admin of your organization' },
  session_required: { status: 403, message: 'This action needs a signed-in session; an API key cannot do it' },
  confirmation_required: { status: 403, message: 'This action needs to be confirmed' },
  csrf_failed: { status: 403, message: 'A session cookie needs the x-csrf-token header from the console' },
  // 404/405/408/410
  not_found: {
    status: 404,
    message: 'Not found',
    details: z.object({ ids: z.array(z.string()).optional().meta({ description: 'On a merge: the ids that were not found.' }) }),
  },
  method_not_allowed: { status: 405, message: 'Method not allowed' },
  request_timeout: { status: 408, message: 'The request was not received in time; the connection is closed' },
  restore_window_expired: {
    status: 410,
    message: 'This record was deleted too long ago to be restored',
    details: z.object({ deletedAt: z.string().meta({ description: 'When it was deleted (ISO 8601).' }) }),
  },
  consent_link_expired: {
    status: 410,
    message: 'This confirmation link has expired; nothing was confirmed. Submit the form again for a new one',
  },
  // 409: the request conflicts with the current state.
  idempotency_key_reused: {
    status: 409,
    message: 'This Idempotency-Key was already used with a different request; use a new key for a new request',
  },
  idempotency_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still being processed' },
  email_exists: {
    status: 409,
    message: 'Email already exists in your organization',
    details: z.object({ existingContactId: z.uuid().optional().meta({ description: 'The contact that has the email.' }) }),
  },
  company_exists: {
    status: 409,
    message: 'A company with this domain already exists in your organization',
    details: z.object({ existingCompanyId: z.uuid().optional().meta({ description: 'The company that has the domain.' }) }),
  },
  not_in_trash: { status: 409, message: 'The record is not in trash' },
  email_taken: { status: 409, message: 'A user with this email already exists' },
  user_inactive: { status: 409, message: 'Keys cannot be created for a deactivated user' },
  last_owner: { status: 409, message: 'An organization keeps at least one active owner; make someone else owner first' },
  cannot_deactivate_self: { status: 409, message: 'You cannot deactivate your own account' },
  sms_consent_required: { status: 409, message: 'This contact has not consented to SMS; record their consent before texting them' },
  contact_has_no_phone: { status: 409, message: 'This contact has no phone number to text' },
  webhook_url_refused: {
    status: 409,
    message: 'The endpoint stays disabled: its URL is refused',
    details: z.object({ reason: z.string().meta({ description: 'Why the URL is refused.' }) }),
  },
  concurrent_update: { status: 409, message: 'The record kept changing while it was being updated; try again' },
  pipeline_name_taken: { status: 409, message: 'A pipeline with this name already exists in your organization' },
  stage_name_taken: { status: 409, message: 'The pipeline already has a stage with this name' },
  pipeline_has_deals: { status: 409, message: 'The pipeline still has deals', details: z.object({ deals: count }) },
  stage_has_deals: { status: 409, message: 'The stage still has deals', details: z.object({ deals: count }) },
  stage_has_leads: { status: 409, message: 'The only stage still has leads', details: z.object({ leads: count }) },
  ai_action_already_decided: {
    status: 409,
    message: 'This AI action was already decided',
    details: z.object({ status: z.string().meta({ description: 'Its current status.' }) }),
  },
  // 413/415/431: the request is too big or in a form the server does not take.
  payload_too_large: { status: 413, message: 'The request body is larger than 1 MB' },
  file_too_large: { status: 413, message: 'The file is too large', details: z.object({ maxBytes: count }) },
  too_many_parts: { status: 413, message: 'Send one file, and at most 10 other form fields' },
  unsupported_media_type: { status: 415, message: 'Send the body as JSON with Content-Type: application/json' },
  unsupported_content_encoding: {
    status: 415,
    message: 'Content-Encoding is not supported; send the body uncompressed (no Content-Encoding, or identity)',
  },
  unsupported_file_type: {
    status: 415,
    message: 'This file type is not accepted',
    details: z.object({ accepted: z.array(z.string()).meta({ description: 'The media types accepted.' }) }),
  },
  headers_too_large: { status: 431, message: 'The request line and headers are larger than 16 KB (a long query string or cookie?)' },
  // 422: well-formed, but it names something that does not fit.
  company_not_found: {
    status: 422,
    message: 'No such company in your organization',
    details: z.object({
      domain: z.string().optional().meta({ description: 'On /v1: the normalised domain that was looked up.' }),
      companyId: z.string().optional().meta({ description: 'On the application surface: the company id that was looked up.' }),
    }),
  },
  stage_not_in_pipeline: {
    status: 422,
    message: 'The stage is not a stage of the pipeline',
    details: z.object({ stageId: z.string(), pipelineId: z.string() }),
  },
  no_default_pipeline: { status: 422, message: 'Your organization has no default pipeline; pass pipelineId' },
  pipeline_has_no_stages: { status: 422, message: 'The pipeline has no stages; add one first' },
  assignee_inactive: { status: 422, message: 'A deactivated user cannot be assigned tasks' },
  stage_limit_reached: { status: 422, message: 'The pipeline holds the most stages it can' },
  invalid_stage_order: {
    status: 422,
    message: 'stageIds must list every stage of the pipeline exactly once',
    details: z.object({ stageIds: z.array(z.string()).meta({ description: 'The stages of the pipeline, in their current order.' }) }),
  },
  file_infected: { status: 422, message: 'The file was refused by the virus scanner', details: z.object({ signature: z.string() }) },
  pipeline_not_found: { status: 422, message: 'No such pipeline in your organization', details: z.object({ pipelineId: z.string() }) },
  hook_url_refused: {
    status: 422,
    message: 'The hookUrl can never be delivered to, so nothing was subscribed',
    details: z.object({
      reason: z.string().meta({ description: 'Why the hookUrl is refused (a private address, a host that does not resolve...).' }),
    }),
  },
  // 429: slow down.
  rate_limited: { status: 429, message: 'Rate limit exceeded', details: z.object({ retryAfter: retryAfter.optional() }) },
  too_many_attempts: { status: 429, message: 'Too many failed sign-in attempts', details: z.object({ retryAfter }) },
  too_many_connections: { status: 429, message: 'Too many open connections from your address; close some or reuse them, then retry' },
  // 5xx: our side.
  internal_error: { status: 500, message: 'Internal server error' },
  save_failed: { status: 500, message: 'Failed to save' },
  service_unavailable: { status: 503, message: 'The service is briefly unavailable; retry shortly' },
  scanner_unavailable: { status: 503, message: 'Files cannot be virus-scanned right now, so none are accepted; try again later' },
  captcha_unavailable: { status: 503, message: 'The CAPTCHA provider could not be reached; nothing was saved, try again' },
  snippet_not_built: { status: 503, message: 'The snippet is not built on this server' },
} as const satisfies Record<string, Entry>;

export type ErrorCatalogue = typeof ERROR_CATALOGUE;
export type ErrorCode = keyof ErrorCatalogue;

/** The extra body fields of `C`, as a caller passes them. */
export type ErrorDetails<C extends ErrorCode> = ErrorCatalogue[C] extends { details: infer S extends z.ZodType } ? z.input<S> : undefined;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CATALOGUE, code);

export const statusOfCode = (code: ErrorCode): ErrorStatus => ERROR_CATALOGUE[code].status;

/** The codes of one surface's procedures, checked against the catalogue by the compiler. */
export const codes = <const T extends readonly ErrorCode[]>(...list: T): T => list;
