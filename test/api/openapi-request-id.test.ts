/**
 * Issue 19: `x-request-id` is on every answer of both surfaces, so both OpenAPI documents declare it on every response
 * of every operation (successes and errors, shared error responses included), with the rule the server applies.
 */
import { buildInternalOpenApiDocument, buildV1OpenApiDocument } from '#core/openapi/documents.ts';
import type { oas31 } from 'zod-openapi';
import { describe, expect, it } from 'vitest';
import { SANE_REQUEST_ID } from '../../apps/server/src/http/request-id.ts';

const BASE = 'https://crm.leadwire.example/api';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Every response of every operation as [where, response], `$ref`s to components.responses resolved. */
function responses(doc: oas31.OpenAPIObject): [string, oas31.ResponseObject][] {
  const out: [string, oas31.ResponseObject][] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      for (const [status, r] of Object.entries(op?.responses ?? {})) {
        const ref = (r as oas31.ReferenceObject).$ref;
        const resolved = ref ? doc.components?.responses?.[ref.split('/').pop()!] : r;
        out.push([`${method.toUpperCase()} ${path} ${status}`, resolved as oas31.ResponseObject]);
      }
    }
  }
  return out;
}

describe.each([
  ['v1', buildV1OpenApiDocument(BASE)],
  ['internal', buildInternalOpenApiDocument(BASE)],
] as const)('the %s document', (_name, doc) => {
  it('declares x-request-id, required, on every response of every operation', () => {
    const all = responses(doc);
    expect(all.length).toBeGreaterThan(50);
    const missing = all.filter(
      ([, r]) => (r.headers?.['x-request-id'] as oas31.ReferenceObject | undefined)?.$ref !== '#/components/headers/RequestId',
    );
    expect(missing.map(([where]) => where)).toEqual([]);
    expect(doc.components?.headers?.RequestId).toMatchObject({ required: true, schema: { type: 'string' } });
  });

  it("documents the server's own rule for keeping an incoming id", () => {
    const pattern = new RegExp(((doc.components!.headers!.RequestId as oas31.HeaderObject).schema as oas31.SchemaObject).pattern!);
    const samples = ['req-1234', 'trace:span.7_x', 'a'.repeat(128), 'a'.repeat(129), '', 'two words', 'café', 'a/b', 'x;y=1', '<b>'];
    for (const s of samples) expect(pattern.test(s), s).toBe(SANE_REQUEST_ID.test(s));
  });

  it('adds it to no webhook: receivers get the headers the spec names, nothing about our requests', () => {
    expect(JSON.stringify(doc.webhooks ?? {})).not.toContain('RequestId');
  });
});
