import type { oas31 } from 'zod-openapi';
import { PUBLIC_API_PER_MINUTE } from '../limits/plans.ts';

const WHEN_ABSENT =
  ' Absent when the key was not recognised (401, `wrong_api_surface`) and on requests refused before authentication (malformed JSON, 413, 415).';

function rateLimit(required: boolean): Record<string, oas31.HeaderObject> {
  const tail = required ? '' : WHEN_ABSENT;
  return {
    'x-ratelimit-limit': {
      description: `Requests allowed per one-minute window for this API key (${PUBLIC_API_PER_MINUTE}).${tail}`,
      required,
      schema: { type: 'integer', minimum: 1, example: PUBLIC_API_PER_MINUTE },
    },
    'x-ratelimit-remaining': {
      description: `Requests left in the current window, this one counted.${tail}`,
      required,
      schema: { type: 'integer', minimum: 0, example: 599 },
    },
    'x-ratelimit-reset': {
      description: `Whole seconds until the current window ends and the allowance is restored: a delta, never a timestamp.${tail}`,
      required,
      schema: { type: 'integer', minimum: 1, maximum: 60, example: 42 },
    },
  };
}

/** The internal surface counts Internal keys only: a session is not rate-limited this way and gets none of these. */
function internalRateLimit(): Record<string, oas31.HeaderObject> {
  const tail =
    ' Sent only when an Internal API key authenticates the request (not with a session token), and absent on requests refused before it was recognised.';
  return {
    'x-ratelimit-limit': {
      description: `Requests allowed in the window closest to running out (per minute or per day, by the key's plan).${tail}`,
      required: false,
      schema: { type: 'integer', minimum: 1 },
    },
    'x-ratelimit-remaining': {
      description: `Requests left in that window, this one counted.${tail}`,
      required: false,
      schema: { type: 'integer', minimum: 0 },
    },
    'x-ratelimit-reset': {
      description: `Whole seconds until that window ends: a delta, never a timestamp.${tail}`,
      required: false,
      schema: { type: 'integer', minimum: 1 },
    },
  };
}

const RETRY_AFTER: oas31.HeaderObject = {
  description:
    'Whole seconds to wait before retrying: on 429 the time until the rate-limit window resets; on 503 a short pause while the service is briefly unavailable.',
  required: true,
  schema: { type: 'integer', minimum: 1, maximum: 60, example: 17 },
};

const IDEMPOTENT_REPLAYED: oas31.HeaderObject = {
  description: '`true` when this response is the stored response of an earlier request with the same `Idempotency-Key`.',
  required: false,
  schema: { type: 'string', const: 'true' },
};

const IDEMPOTENCY_KEY: oas31.ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe. The first successful response is stored for 24 hours and replayed (with `idempotent-replayed: true`) to retries with the same key and the same request; the same key with a different body or `X-Source` gives 409 `idempotency_key_reused`, and while the first request still runs 409 `idempotency_in_progress`. Errors are not stored, so a corrected retry runs. Keys are scoped to the API key; use a fresh UUID per logical request.',
  schema: { type: 'string', pattern: '^[!-~]{1,255}$', minLength: 1, maxLength: 255, example: '5f0e9c1e-3b7a-4c2d-9a43-2f8e61b0d7aa' },
};

/** `X-Source`; its schema is the body's `source` component, so the two rules cannot drift apart. */
const X_SOURCE: oas31.ParameterObject = {
  name: 'X-Source',
  in: 'header',
  required: false,
  description:
    'Origin of the records written, applied to NEW contacts only (default `api`). When the body also carries `source`, the body wins. Same rules as `source`: letters, digits, dot, dash, underscore; at most 40 characters; an invalid value gives 400 `validation_failed`.',
  schema: { $ref: '#/components/schemas/Source' },
};

/** apps/server/src/http/request-id.ts keeps an incoming id that matches this, and makes a UUID otherwise. */
const REQUEST_ID: oas31.HeaderObject = {
  description:
    "This request's id: the `X-Request-Id` the client sent when it is 1-128 letters, digits or `_ . : -`, otherwise one the server made (a UUID). Every error body repeats it as `requestId`, and the server's log lines of the request carry it as `reqId`: quote it when reporting a problem.",
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$', example: '3f2b8c1e-6d4a-4f0e-9b7c-2a1d5e8f9c03' },
};

const names = {
  'x-ratelimit-limit': 'RateLimitLimit',
  'x-ratelimit-remaining': 'RateLimitRemaining',
  'x-ratelimit-reset': 'RateLimitReset',
};
/** Names of the optional flavour, for responses where the key may not have been recognised. */
const optional = (name: string) => `${name}IfAuthenticated`;
/** Names of the internal surface's flavour, sent for Internal keys only. */
const internal = (name: string) => `${name}IfInternalKey`;

/** components.headers: each header written once and referenced from every response. */
export function headerComponents(): Record<string, oas31.HeaderObject> {
  const sent = rateLimit(true);
  const maybe = rateLimit(false);
  return {
    ...Object.fromEntries(
      Object.entries(names).flatMap(([header, name]) => [
        [name, sent[header]!],
        [optional(name), maybe[header]!],
      ]),
    ),
    ...Object.fromEntries(Object.entries(names).map(([header, name]) => [internal(name), internalRateLimit()[header]!])),
    RetryAfter: RETRY_AFTER,
    RetryAfterIfSent: {
      ...RETRY_AFTER,
      required: false,
      description: `${RETRY_AFTER.description} Sent with the codes of this status that say so (\`rate_limited\`, \`too_many_attempts\`, \`service_unavailable\`, \`captcha_unavailable\`).`,
    },
    IdempotentReplayed: IDEMPOTENT_REPLAYED,
    RequestId: REQUEST_ID,
  };
}

export const parameterComponents = (): Record<string, oas31.ParameterObject> => ({ IdempotencyKey: IDEMPOTENCY_KEY, XSource: X_SOURCE });

const header = (name: string): oas31.ReferenceObject => ({ $ref: `#/components/headers/${name}` });
export const parameter = (name: 'IdempotencyKey' | 'XSource'): oas31.ReferenceObject => ({ $ref: `#/components/parameters/${name}` });

/**
 * How an operation's answers carry the rate-limit trio: `v1` always once the key is recognised, `internal-key` only for
 * an Internal key (never a session), `none` for operations that take no credential.
 */
export type RateHeaderMode = 'v1' | 'internal-key' | 'none';

/**
 * The headers of a response. `always`: on /v1, the rate-limit trio is sent on every answer of this status (successes
 * and errors given after the key was recognised). `retryAfter`: `always` when every code of the status sends it.
 */
export function responseHeaders(opts: {
  mode: RateHeaderMode;
  always: boolean;
  retryAfter?: 'always' | 'sometimes';
  replay?: boolean;
}): Record<string, oas31.ReferenceObject> {
  const rateName = (name: string) => (opts.mode === 'internal-key' ? internal(name) : opts.always ? name : optional(name));
  return {
    ...(opts.mode === 'none' ? {} : Object.fromEntries(Object.entries(names).map(([h, name]) => [h, header(rateName(name))]))),
    ...(opts.retryAfter ? { 'retry-after': header(opts.retryAfter === 'always' ? 'RetryAfter' : 'RetryAfterIfSent') } : {}),
    ...(opts.replay ? { 'idempotent-replayed': header('IdempotentReplayed') } : {}),
    // Every answer carries it, whatever the surface or the status (apps/server/src/app.ts sets it first thing).
    'x-request-id': header('RequestId'),
  };
}
