import { PUBLIC_PERMISSIONS } from '@leadwire/db';
import type { oas31 } from 'zod-openapi';
import { errors, toPublicError } from '../errors.ts';
import { responseHeaders } from './headers.ts';

/** What an example needs to read like the operation it is shown on. */
export interface ExampleContext {
  permission: string;
  /** A request field the validation example can blame. */
  field: string;
  /** The message of a not_found on this operation. */
  notFound: string;
}

type ErrorSchemaName = 'Error' | 'ValidationError' | 'InsufficientScopeError' | 'CompanyNotFoundError';

interface ErrorKind {
  /** When this code is answered, for the response description. */
  when: string;
  /** Answered only once the key was recognised, so the rate-limit headers are always on it. */
  afterAuth: boolean;
  schema: ErrorSchemaName;
  /** A real error built by the factories the server uses, so examples and statuses cannot drift from the code. */
  sample: (ctx: ExampleContext) => unknown;
}

const framework = (code: string) => Object.assign(new Error(code), { code });

/** Every code the public API can answer with; the order is the order of the examples. */
const CATALOGUE: Record<string, ErrorKind> = {
  validation_failed: {
    afterAuth: true,
    when: 'the body, the query, the path or a header (`X-Source`, `Idempotency-Key`) is invalid; `issues` lists every problem',
    schema: 'ValidationError',
    sample: ({ field }) =>
      errors.validation(
        [{ path: field, message: 'Invalid input: expected string, received number' }],
        `Validation failed: ${field}: Invalid input: expected string, received number`,
      ),
  },
  missing_identity: {
    afterAuth: true,
    when: 'neither an email nor companyDomain together with firstName and lastName was sent',
    schema: 'Error',
    sample: () => errors.missingIdentity(),
  },
  malformed_json: {
    afterAuth: false,
    when: 'the body is not valid JSON or not UTF-8, or is empty while `Content-Type` is `application/json`',
    schema: 'Error',
    sample: () => framework('FST_ERR_CTP_INVALID_JSON_BODY'),
  },
  unauthorized: {
    afterAuth: false,
    when: 'the API key is missing, malformed, unknown, revoked or expired, or its owner was deactivated or changed their password',
    schema: 'Error',
    sample: () => errors.unauthorized('Invalid, revoked or expired API key'),
  },
  wrong_api_surface: {
    afterAuth: false,
    when: 'an Internal key was used; /v1 takes Public API keys only',
    schema: 'Error',
    sample: () => errors.wrongSurface('Internal keys cannot call the public API /v1; create a Public API key'),
  },
  insufficient_scope: {
    afterAuth: true,
    when: 'the key lacks the permission this operation needs; `required` names it',
    schema: 'InsufficientScopeError',
    sample: ({ permission }) => errors.insufficientScope(permission),
  },
  contact_limit_reached: {
    afterAuth: true,
    when: "the organization's plan contact cap is reached; no contact was created",
    schema: 'Error',
    sample: () => errors.contactLimitReached(),
  },
  not_found: {
    afterAuth: true,
    when: 'no matching record',
    schema: 'Error',
    sample: ({ notFound }) => errors.notFound(notFound),
  },
  idempotency_key_reused: {
    afterAuth: true,
    when: 'the `Idempotency-Key` was already used by this API key with a different request',
    schema: 'Error',
    sample: () => errors.idempotencyConflict(),
  },
  idempotency_in_progress: {
    afterAuth: true,
    when: 'a request with this `Idempotency-Key` is still running; retry it shortly',
    schema: 'Error',
    sample: () => errors.idempotencyInProgress(),
  },
  payload_too_large: {
    afterAuth: false,
    when: 'the body is larger than 1 MB',
    schema: 'Error',
    sample: () => framework('FST_ERR_CTP_BODY_TOO_LARGE'),
  },
  unsupported_media_type: {
    afterAuth: false,
    when: 'the body is not sent as `application/json`, or `Content-Type` is missing',
    schema: 'Error',
    sample: () => framework('FST_ERR_CTP_INVALID_MEDIA_TYPE'),
  },
  unsupported_content_encoding: {
    afterAuth: false,
    when: 'the body was sent with a `Content-Encoding` (compression is not supported; send it uncompressed)',
    schema: 'Error',
    sample: () => framework('UNSUPPORTED_CONTENT_ENCODING'),
  },
  company_not_found: {
    afterAuth: true,
    when: 'companyDomain names no company of the organization (create it first with POST /companies/upsert); `domain` is the normalised domain',
    schema: 'CompanyNotFoundError',
    sample: () => errors.companyNotFound('example.com'),
  },
  rate_limited: {
    afterAuth: true,
    when: 'the key made more than 600 requests in the current minute; wait `retry-after` seconds',
    schema: 'Error',
    sample: () => errors.rateLimited(17),
  },
  internal_error: {
    afterAuth: false,
    when: 'an unexpected failure on our side; retrying (with the same `Idempotency-Key`) is safe',
    schema: 'Error',
    sample: () => new Error('unexpected'),
  },
  save_failed: {
    afterAuth: true,
    when:
      'the write could not finish on the database in time, or lost its connection, and was rolled back (`Failed to save contact` for contacts, `Failed to save` otherwise); retrying with the same `Idempotency-Key` is safe',
    schema: 'Error',
    sample: () => errors.saveFailed(new Error('timeout')),
  },
  // Refused at the HTTP edge, before the operation runs: by the server as a whole, never after authentication.
  malformed_url: {
    afterAuth: false,
    when: 'the path or query string is not valid percent-encoded UTF-8 (e.g. `%zz` in a path parameter, `?q=%FF`)',
    schema: 'Error',
    sample: () => errors.malformedUrl(),
  },
  request_timeout: {
    afterAuth: false,
    when: 'the request line, headers or body did not arrive within the time-outs (`HTTP_HEADERS_TIMEOUT_MS`, `HTTP_REQUEST_TIMEOUT_MS`), or the body arrived more slowly than `HTTP_BODY_MIN_RATE_BYTES_PER_S` after `HTTP_BODY_GRACE_MS` or stopped for `HTTP_BODY_IDLE_TIMEOUT_MS`; the connection is closed',
    schema: 'Error',
    sample: () => errors.requestTimeout(),
  },
  headers_too_large: {
    afterAuth: false,
    when: 'the request line and headers together exceed 16 KB (a very long query string counts); the connection is closed',
    schema: 'Error',
    sample: () => errors.headersTooLarge(),
  },
  service_unavailable: {
    afterAuth: false,
    when: 'the database is briefly unreachable, this server is shutting down, or it is at its connection limit and closed this slow request to make room; nothing was saved, retry after `retry-after` seconds (with the same `Idempotency-Key`)',
    schema: 'Error',
    sample: () => errors.serviceUnavailable(),
  },
};

const STATUS_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  408: 'Request timeout',
  429: 'Too many requests',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
};

const ref = (name: string): oas31.ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

/** The components every error response refers to: one `Error` shape and the variants that add fields to it. */
export function errorSchemas(): Record<string, oas31.SchemaObject> {
  const variant = (code: string, properties: Record<string, oas31.SchemaObject | oas31.ReferenceObject>) => ({
    allOf: [
      ref('Error'),
      { type: 'object' as const, properties: { code: { const: code }, ...properties }, required: Object.keys(properties) },
    ],
  });
  return {
    Error: {
      type: 'object',
      title: 'Error',
      description:
        'The body of every error. `error` is a human-readable message (show or log it; its wording may change); `code` is a stable machine identifier (branch on it). Some codes add fields: see ValidationError, InsufficientScopeError and CompanyNotFoundError.',
      properties: {
        error: { type: 'string', description: 'Human-readable message.', example: 'Invalid, revoked or expired API key' },
        code: { type: 'string', description: 'Stable machine identifier, e.g. `unauthorized`.', example: 'unauthorized' },
      },
      required: ['error', 'code'],
    },
    Issue: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: 'Where the problem is: a dotted body or query path (`tags.2`), a path parameter, or a header name; empty for the body as a whole.',
        },
        message: { type: 'string' },
      },
      required: ['path', 'message'],
      additionalProperties: false,
    },
    ValidationError: {
      description: '`validation_failed`: the request did not match the schema.',
      ...variant('validation_failed', { issues: { type: 'array', items: ref('Issue') } }),
    },
    InsufficientScopeError: {
      description: '`insufficient_scope`: the key lacks a permission; `required` names it.',
      ...variant('insufficient_scope', { required: { type: 'string', enum: [...PUBLIC_PERMISSIONS] } }),
    },
    CompanyNotFoundError: {
      description: '`company_not_found`: no company with that domain exists yet.',
      ...variant('company_not_found', { domain: { type: 'string', description: 'The normalised domain that was looked up.' } }),
    },
  };
}

/**
 * The edge errors as plain `Error` responses by status, for a document that does not list codes per operation (the
 * internal surface): every operation can meet them.
 */
export function edgeErrorResponses(): Record<string, oas31.ResponseObject> {
  const out: Record<string, oas31.ResponseObject> = {};
  for (const code of EDGE_ERRORS) {
    const kind = kindOf(code, 'the edge');
    const status = toPublicError(kind.sample({ permission: '', field: '', notFound: '' })).status;
    out[String(status)] = {
      description: `${STATUS_TITLES[status] ?? 'Error'}: \`${code}\`, ${kind.when}.`,
      ...(status === 503 ? { headers: { 'retry-after': { $ref: '#/components/headers/RetryAfter' } } } : {}),
      content: { 'application/json': { schema: ref('Error'), example: toPublicError(kind.sample({ permission: '', field: '', notFound: '' })).body } },
    };
  }
  return out;
}

/** Codes any operation can answer with, raised before it runs or around it (see the server's http/edge.ts). */
export const EDGE_ERRORS = ['request_timeout', 'headers_too_large', 'service_unavailable'] as const;

function kindOf(code: string, where: string): ErrorKind {
  const kind = CATALOGUE[code];
  if (!kind) throw new Error(`OpenAPI: ${where} lists the unknown error code ${code}; add it to openapi/errors.ts`);
  return kind;
}

/** The status an error code is answered with, read from the error itself. */
export function statusOf(code: string, ctx: ExampleContext): number {
  return toPublicError(kindOf(code, 'a caller').sample(ctx)).status;
}

/** The error responses of one operation: its codes grouped by HTTP status, each with its body schema and an example. */
export function errorResponses(codes: ReadonlySet<string>, ctx: ExampleContext, where: string): Record<string, oas31.ResponseObject> {
  const byStatus = new Map<number, string[]>();
  for (const code of Object.keys(CATALOGUE).filter((c) => codes.has(c))) {
    const status = statusOf(code, ctx);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const code of codes) kindOf(code, where);

  const out: Record<string, oas31.ResponseObject> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const plain = group.filter((c) => kindOf(c, where).schema === 'Error');
    const variants = [...new Set(group.map((c) => kindOf(c, where).schema).filter((s) => s !== 'Error'))];
    const branches: (oas31.SchemaObject | oas31.ReferenceObject)[] = [
      ...(plain.length ? [{ allOf: [ref('Error'), { type: 'object' as const, properties: { code: { enum: plain } } }] }] : []),
      ...variants.map(ref),
    ];
    const examples = Object.fromEntries(
      group.map((code) => [code, { summary: code, value: toPublicError(kindOf(code, where).sample(ctx)).body }]),
    );
    out[String(status)] = {
      description: `${STATUS_TITLES[status] ?? 'Error'}.\n\n${group.map((c) => `- \`${c}\`: ${kindOf(c, where).when}.`).join('\n')}`,
      headers: responseHeaders({ always: group.every((c) => kindOf(c, where).afterAuth), retryAfter: status === 429 || status === 503 }),
      content: { 'application/json': { schema: branches.length === 1 ? branches[0]! : { oneOf: branches }, examples } },
    };
  }
  return out;
}
