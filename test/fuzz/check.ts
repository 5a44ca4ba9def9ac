/**
 * What the fuzz tests hold every answer to: a documented status, headers as documented, an error in the shape
 * `{ error, code }` with a code the operation documents at that status, a success body matching its schema.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Schema } from './generate.ts';

/** A response of the document, a shared one (`$ref` into components.responses) resolved. */
export const responseOf = (doc: Schema, op: Schema, status: number): Schema | undefined => {
  const r = op.responses?.[String(status)];
  return r?.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
};

/** The codes an operation documents, with the status each is documented under. */
export function documentedCodes(doc: Schema, op: Schema): Map<string, number> {
  const out = new Map<string, number>();
  for (const status of Object.keys(op.responses ?? {})) {
    for (const code of responseOf(doc, op, Number(status))?.['x-error-codes'] ?? []) out.set(code, Number(status));
  }
  return out;
}

/** Every response header a client is told of on this surface: one sent but undocumented is a drift. */
const WATCHED_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'idempotent-replayed'];

/** The headers an answer carries against those its documented response lists (and requires). */
function headerProblem(doc: Schema, response: Schema, headers: Headers): string | undefined {
  const documented = response.headers ?? {};
  for (const name of WATCHED_HEADERS) {
    const spec = documented[name]?.$ref ? doc.components.headers[documented[name].$ref.split('/').pop()] : documented[name];
    const value = headers.get(name);
    if (value !== null && !spec) return `header ${name} is sent but not documented`;
    if (value === null && spec?.required) return `header ${name} is documented as required but not sent`;
  }
  return undefined;
}

/**
 * Validators of each operation's documented success bodies, compiled from the document itself: its `$ref`s point into
 * its components, which are registered once under an id of their own.
 */
export function responseValidators(doc: Schema): (op: Schema, status: number) => ValidateFunction | undefined {
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  const rebase = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc.json#/components/')) as Schema;
  ajv.addSchema({ $id: 'doc.json', components: rebase(doc.components ?? {}) });
  const cache = new Map<string, ValidateFunction | undefined>();
  return (op, status) => {
    const key = `${op.operationId} ${status}`;
    if (!cache.has(key)) {
      const response = op.responses?.[String(status)];
      const schema = (response?.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response)?.content?.['application/json']
        ?.schema;
      cache.set(key, schema ? ajv.compile(rebase(schema)) : undefined);
    }
    return cache.get(key);
  };
}

export function check(
  doc: Schema,
  res: { status: number; text: string; headers: Headers },
  op: Schema,
  validatorFor: ReturnType<typeof responseValidators>,
): string | undefined {
  const { status, text } = res;
  if (status >= 500) return `a ${status}`;
  const response = responseOf(doc, op, status);
  if (!response) return `status ${status} is not documented for ${op.operationId}`;
  const headers = headerProblem(doc, response, res.headers);
  if (headers) return headers;
  const validate = validatorFor(op, status);
  if (status < 400 && !validate) return undefined;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `a ${status} body that is not JSON`;
  }
  if (status >= 400) {
    if (!body || typeof body !== 'object' || typeof body.error !== 'string' || typeof body.code !== 'string')
      return 'an error outside { error, code }';
    const at = documentedCodes(doc, op).get(body.code);
    if (at === undefined) return `code ${body.code} is not documented for ${op.operationId}`;
    if (at !== status) return `code ${body.code} answered with ${status}, documented as ${at}`;
  }
  return !validate || validate(body) ? undefined : `a ${status} body outside its schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`;
}
