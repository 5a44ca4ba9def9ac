import { z } from 'zod';
import type { oas31 } from 'zod-openapi';
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode, toPublicError } from '../errors.ts';
import { Issue } from '../errors/catalogue.ts';
import { AFTER_AUTH, type ExampleContext, SENDS_RETRY_AFTER, sampleError, WHEN } from './error-docs.ts';
import { type RateHeaderMode, responseHeaders } from './headers.ts';

export type { ExampleContext };

/*
 * The error catalogue (errors/catalogue.ts) as OpenAPI: one schema per error shape in components.schemas (`ErrorBody`
 * for the codes that carry `{ error, code }` only, and one per code that adds fields), and each operation's error
 * responses built from the codes it can raise, grouped by status, each referring to the shared shapes. Codes are
 * `enum`s, never `const`, which some generators (openapi-python-client) drop.
 */

const SCHEMAS = '#/components/schemas/';
const ref = (name: string): oas31.ReferenceObject => ({ $ref: `${SCHEMAS}${name}` });

/** Names kept from the documents before the catalogue, so that generated clients keep their class names. */
const SHAPE_NAMES: Partial<Record<ErrorCode, string>> = { validation_failed: 'ValidationError' };
const pascal = (code: string) => code.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

const hasDetails = (code: ErrorCode): boolean => 'details' in ERROR_CATALOGUE[code];

/** The components.schemas name of the body `code` is answered with. */
export const shapeOf = (code: ErrorCode): string => (hasDetails(code) ? (SHAPE_NAMES[code] ?? `${pascal(code)}Error`) : 'ErrorBody');

const ERROR_FIELD = { type: 'string' as const, description: 'Human-readable message: show or log it; its wording may change.' };
/** Every error body's id of its request, also sent as `x-request-id`; the examples show a made-up one. */
const REQUEST_ID_FIELD = {
  type: 'string' as const,
  description:
    'The id of this request, as in the `x-request-id` response header: your `X-Request-Id` when it is 1-128 characters of letters, digits and `_ . : -`, else one the server made. Quote it when reporting a problem; it finds the request in the server logs.',
  example: '01JDX7Q4V8M2K3N5P6R7S8T9VW',
};
const EXAMPLE_REQUEST_ID = REQUEST_ID_FIELD.example;

/** components.schemas of every error shape. */
export function errorSchemas(): Record<string, oas31.SchemaObject> {
  const plain = ERROR_CODES.filter((c) => !hasDetails(c));
  const registry = z.registry<{ id: string }>();
  registry.add(Issue, { id: 'Issue' });
  for (const code of ERROR_CODES) {
    const entry = ERROR_CATALOGUE[code];
    if (!('details' in entry)) continue;
    registry.add(z.object({ error: z.string(), code: z.enum([code]), ...entry.details.shape }), { id: shapeOf(code) });
  }
  const { schemas } = z.toJSONSchema(registry, { uri: (id) => `${SCHEMAS}${id}`, io: 'output', unrepresentable: 'any' });
  const detailed = Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => {
      const code = ERROR_CODES.find((c) => hasDetails(c) && shapeOf(c) === id);
      const out = schema as oas31.SchemaObject;
      if (code) {
        out.description = `\`${code}\` (${ERROR_CATALOGUE[code].status}): ${ERROR_CATALOGUE[code].message}.`;
        out.properties = { ...out.properties, error: ERROR_FIELD, requestId: REQUEST_ID_FIELD };
        out.required = [...(out.required ?? []), 'requestId'];
      }
      return [id, out];
    }),
  );
  return {
    ErrorBody: {
      type: 'object',
      description:
        'The body of every error: `error` is a human-readable message (its wording may change), `code` a stable machine identifier to branch on, `requestId` the id to quote when reporting a problem. The codes that add fields have shapes of their own (ValidationError, InsufficientScopeError, ...), with the same two fields.',
      properties: {
        error: { ...ERROR_FIELD, example: 'Invalid, revoked or expired API key' },
        code: { type: 'string', enum: plain, description: 'Stable machine identifier.', example: 'unauthorized' },
        requestId: REQUEST_ID_FIELD,
      },
      required: ['error', 'code', 'requestId'],
    },
    ...detailed,
  };
}

const STATUS_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Too many requests',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
};

/** Codes whose example does not depend on the operation: a status answered with one of these alone is a shared component. */
const CONTEXT_FREE = (code: ErrorCode) => !['validation_failed', 'insufficient_scope', 'not_found'].includes(code);
const responseName = (code: ErrorCode) => pascal(code);

export interface ErrorResponseOptions {
  mode: RateHeaderMode;
  ctx: ExampleContext;
}

function errorResponse(status: number, group: readonly ErrorCode[], o: ErrorResponseOptions): oas31.ResponseObject {
  const shapes = [...new Set(group.map(shapeOf))];
  const retry = group.filter((c) => SENDS_RETRY_AFTER.has(c)).length;
  const examples = Object.fromEntries(
    group.map((code) => [
      code,
      { summary: code, value: { ...toPublicError(sampleError(code, o.ctx)).body, requestId: EXAMPLE_REQUEST_ID } },
    ]),
  );
  return {
    description: `${STATUS_TITLES[status] ?? 'Error'}.\n\n${group.map((c) => `- \`${c}\`: ${WHEN[c] ?? ERROR_CATALOGUE[c].message}.`).join('\n')}`,
    headers: responseHeaders({
      mode: o.mode,
      always: group.every((c) => AFTER_AUTH.has(c)),
      ...(retry ? { retryAfter: retry === group.length ? 'always' : 'sometimes' } : {}),
    }),
    content: { 'application/json': { schema: shapes.length === 1 ? ref(shapes[0]!) : { oneOf: shapes.map(ref) }, examples } },
    // Machine-readable: the codes this status stands for on this operation (the fuzz tests hold the server to it).
    'x-error-codes': [...group],
  };
}

/**
 * The error responses of one operation: its codes grouped by their catalogue status. A status that stands for one
 * operation-independent code is a reference into `components.responses`, added to `shared`.
 */
export function errorResponses(
  codes: ReadonlySet<ErrorCode>,
  o: ErrorResponseOptions,
  shared: Record<string, oas31.ResponseObject>,
): Record<string, oas31.ResponseObject | oas31.ReferenceObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ERROR_CODES.filter((c) => codes.has(c))) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, oas31.ResponseObject | oas31.ReferenceObject> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const only = group.length === 1 ? group[0]! : undefined;
    if (only && CONTEXT_FREE(only)) {
      // Named by code, and by how its headers read: a key-less operation's answers carry no rate-limit headers.
      const name = `${responseName(only)}${o.mode === 'none' ? 'Keyless' : ''}`;
      shared[name] ??= errorResponse(status, group, o);
      out[String(status)] = { $ref: `#/components/responses/${name}` };
    } else {
      out[String(status)] = errorResponse(status, group, o);
    }
  }
  return out;
}

/** The status an error code is answered with. */
export const statusOf = (code: ErrorCode): number => ERROR_CATALOGUE[code].status;

/**
 * Drops the error shapes and headers no operation of this document refers to: the catalogue is shared by both
 * surfaces, each of which answers only part of it. A component is kept when it is reachable through `$ref`s from the
 * document outside its components or from a component that is never dropped (every schema not in `error`): one walk of
 * the document, where comparing every component against the rest of the document re-serialized it once per name.
 */
export function pruneUnusedComponents(doc: oas31.OpenAPIObject, error: ReadonlySet<string>): void {
  const kinds = ['schemas', 'headers', 'responses'] as const;
  const tables = kinds.map((kind) => [kind, (doc.components?.[kind] ?? {}) as Record<string, unknown>] as const);
  const prunable = (kind: string, name: string) => kind !== 'schemas' || error.has(name);
  const reached = new Set<string>();
  const pending: unknown[] = [{ ...doc, components: { ...doc.components, schemas: {}, headers: {}, responses: {} } }];
  for (const [kind, table] of tables) for (const [name, value] of Object.entries(table)) if (!prunable(kind, name)) pending.push(value);
  while (pending.length > 0) {
    for (const target of refsIn(pending.pop())) {
      if (reached.has(target)) continue;
      reached.add(target);
      const [, , kind, name] = target.split('/');
      const found = tables.find(([k]) => k === kind)?.[1][name!];
      if (found !== undefined) pending.push(found);
    }
  }
  for (const [kind, table] of tables)
    for (const name of Object.keys(table)) if (prunable(kind, name) && !reached.has(`#/components/${kind}/${name}`)) delete table[name];
}

/** Every `$ref` string under `node`. */
function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, out);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refsIn(value, out);
    }
  }
  return out;
}

/**
 * Every `const` as a one-value `enum`: openapi-python-client drops a schema whose property is a `const` (the v1 error
 * shapes were lost that way), and the two say the same thing.
 */
export function constToEnum(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) constToEnum(item);
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if ('const' in o && !('enum' in o) && (typeof o.type === 'string' || typeof o.const !== 'object')) {
      o.enum = [o.const];
      delete o.const;
    }
    for (const value of Object.values(o)) constToEnum(value);
  }
}
