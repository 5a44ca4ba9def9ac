/**
 * Both OpenAPI documents, built in-process (no server): Redocly's `recommended` rules find no error, and the internal
 * document says what each operation answers, how it authenticates, and under which tag.
 */
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { internalRouter, restRoutes } from '@leadwire/core';
import { buildInternalOpenApiDocument, buildV1OpenApiDocument } from '#core/openapi/documents.ts';
import { describe, expect, it } from 'vitest';

const BASE = 'https://crm.leadwire.example/api';
const v1 = buildV1OpenApiDocument(BASE);
const internal = buildInternalOpenApiDocument(BASE);

async function lint(name: string, doc: object): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  return lintFromString({ source: JSON.stringify(doc), absoluteRef: `${name}.json`, config });
}

const tally = (problems: NormalizedProblem[], severity: string) =>
  Object.fromEntries(
    [...new Set(problems.filter((p) => p.severity === severity).map((p) => p.ruleId))].map((rule) => [
      rule,
      problems.filter((p) => p.severity === severity && p.ruleId === rule).length,
    ]),
  );

describe("Redocly's recommended rules", () => {
  it.each([
    ['v1', v1],
    ['internal', internal],
  ] as const)('find no error in the %s document, and only the known warnings', async (name, doc) => {
    const problems = await lint(name, doc);
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
    // no-ambiguous-paths: /workflows/{id}/rotate-token beside /workflows/hooks/{token}; the router takes the literal
    // segment first and no workflow id is "hooks" (ids are UUIDs), so both resolve as documented.
    expect(tally(problems, 'warn')).toEqual(name === 'internal' ? { 'no-ambiguous-paths': 1 } : {});
  });
});

describe('the internal document', () => {
  const operations = Object.entries(internal.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, any>).map(([method, op]) => ({ path, method, op })),
  );
  const op = (method: string, path: string) => (internal.paths as any)[path][method];
  const codesAt = (method: string, path: string, status: number) => {
    const r = op(method, path).responses[String(status)];
    return (r?.$ref ? (internal.components!.responses as any)[r.$ref.split('/').pop()] : r)?.['x-error-codes'];
  };

  it('gives every operation a tag the document lists, a description and its security', () => {
    const tags = new Set((internal.tags ?? []).map((t) => t.name));
    for (const { path, method, op: o } of operations) {
      expect(o.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const tag of o.tags) expect(tags.has(tag), tag).toBe(true);
      expect(o.description, `${method} ${path}`).toBeTruthy();
      expect(o.security, `${method} ${path}`).toBeDefined();
    }
    for (const tag of internal.tags ?? []) expect(tag.description).toBeTruthy();
    expect(internal.components?.securitySchemes?.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(internal.servers).toEqual([expect.objectContaining({ url: BASE })]);
  });

  it('marks the operations that take no credential with security: [], and the rest with both schemes', () => {
    expect(op('post', '/accounts/sign-in').security).toEqual([]);
    expect(op('post', '/accounts/sign-up').security).toEqual([]);
    expect(op('get', '/pipelines').security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    expect(operations.filter((o) => o.op.security.length === 0).length).toBeLessThan(operations.length / 4);
  });

  it('documents the answers the issue found missing', () => {
    expect(codesAt('post', '/pipelines', 409)).toContain('pipeline_name_taken');
    expect(codesAt('post', '/contacts', 422)).toContain('company_not_found');
    expect(codesAt('post', '/accounts/sign-in', 429)).toContain('too_many_attempts');
    expect(codesAt('get', '/pipelines', 429)).toEqual(['rate_limited', 'too_many_connections']);
    expect(op('get', '/pipelines').responses['429'].headers['retry-after']).toBeDefined();
    expect(op('get', '/pipelines').responses['200'].headers['x-ratelimit-limit']).toBeDefined();
    // The internal 400 carries `issues`, through the shared ValidationError shape.
    expect(JSON.stringify(op('get', '/pipelines').responses['400'])).toContain('#/components/schemas/ValidationError');
    expect((internal.components!.schemas as any).ValidationError.required).toContain('issues');
    for (const r of restRoutes(internalRouter)) {
      const path = r.path;
      for (const code of r.errorCodes)
        expect(JSON.stringify(op(r.method.toLowerCase(), path)['x-error-codes']), `${r.procedure} ${code}`).toContain(`"${code}"`);
    }
  });

  it('publishes the error shapes once, with enum codes and no schema named Error', () => {
    for (const doc of [v1, internal]) {
      const schemas = doc.components!.schemas as Record<string, any>;
      expect(schemas.Error).toBeUndefined();
      expect(schemas.ErrorBody.properties.code.enum).toContain('unauthorized');
      expect(JSON.stringify(doc)).not.toMatch(/"const":"[a-z_]+"/);
    }
    expect((v1.components!.schemas as any).InsufficientScopeError.properties.code).toEqual({
      type: 'string',
      enum: ['insufficient_scope'],
    });
    for (const hook of Object.values(v1.webhooks ?? {})) expect((hook as any).post.security).toEqual([]);
  });
});
