/**
 * The reference generates its "try it" requests and curl samples from the request examples of both OpenAPI
 * documents: each must be a valid input of its own operation, and carry no blank placeholder that would clear a
 * stored field when run.
 */
import { internalRouter, restRoutes, v1Router } from '@leadwire/core';
import { buildInternalOpenApiDocument, buildV1OpenApiDocument } from '#core/openapi/documents.ts';
import type { AnyTRPCRouter } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';

type Op = {
  parameters?: ({ in: string; name: string; required?: boolean; example?: unknown } | { $ref: string })[];
  requestBody?: { content: Record<string, { example?: unknown }> };
};

function blanks(value: unknown, path = ''): string[] {
  if (value === '') return [path || '(body)'];
  if (Array.isArray(value)) return value.flatMap((v, i) => blanks(v, `${path}.${i}`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => blanks(v, path ? `${path}.${k}` : k));
  return [];
}

const surfaces: [string, AnyTRPCRouter, ReturnType<typeof buildV1OpenApiDocument>][] = [
  ['/api/v1', v1Router, buildV1OpenApiDocument('http://localhost:3000/api')],
  ['/api', internalRouter, buildInternalOpenApiDocument('http://localhost:3000/api')],
];

describe.each(surfaces)('request examples of %s', (_name, router, doc) => {
  const procedures = router._def.procedures as Record<string, { _def: { inputs: ZodType[] } }>;
  const routes = restRoutes(router);

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: a valid input with no blank strings', (_label, route) => {
    const op = (doc.paths as Record<string, Record<string, Op>>)[route.path]![route.method.toLowerCase()]!;
    const input: Record<string, unknown> = {};
    for (const p of op.parameters ?? []) {
      if ('$ref' in p) continue;
      if (p.in === 'path') expect(p.example, `path parameter ${p.name} has an example`).toBeDefined();
      if (p.example !== undefined) input[p.name] = p.example;
    }
    const body = op.requestBody?.content['application/json'];
    if (op.requestBody) {
      expect(body?.example, 'the request body has an example').toBeDefined();
      Object.assign(input, body!.example);
    }
    expect(blanks(input), 'no empty-string placeholders').toEqual([]);
    const schema = procedures[route.procedure]!._def.inputs[0];
    if (!schema) return;
    // Operations without parameters or body take no input at all (z.void()).
    const parsed = schema.safeParse(Object.keys(input).length || op.requestBody ? input : undefined);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  });
});

it('shows the v1 upsert with the fields it writes, none blank', () => {
  const doc = surfaces[0]![2];
  const upsert = (doc.paths as Record<string, Record<string, Op>>)['/contacts/upsert']!.post!;
  expect(upsert.requestBody!.content['application/json']!.example).toMatchObject({
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: 'Lovelace',
  });
});
