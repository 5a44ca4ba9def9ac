import { initTRPC } from '@trpc/server';
import { generateOpenApiDocument, type OpenApiMeta } from 'trpc-to-openapi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RequestContext } from '../context.ts';
import { AppError } from '../errors.ts';
import { internalProcedure } from '../auth/internal.ts';
import { internalRouter } from '../internal-router.ts';
import type { LeadwireMeta } from '../trpc.ts';
import { v1Router } from '../v1-router.ts';
import { restRoutes } from './routes.ts';

/**
 * The route table is read through public APIs only: the router's procedures as its properties, trpc-to-openapi's walk
 * and parsers, zod's JSON Schema. These tests hold it to what the libraries themselves see, so an upgrade that changes
 * any of those fails here rather than silently dropping routes, strictness or authentication from the REST surface.
 */

const operations = (router: typeof internalRouter | typeof v1Router) =>
  Object.entries(generateOpenApiDocument(router, { title: '', version: '', baseUrl: '' }).paths ?? {})
    .flatMap(([path, item]) => Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();

describe('the route table', () => {
  it.each([
    ['internal', internalRouter],
    ['v1', v1Router],
  ] as const)('has exactly the operations trpc-to-openapi generates for the %s router', (_name, router) => {
    const routes = restRoutes(router).map((r) => `${r.method} ${r.path}`);
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.sort()).toEqual(operations(router));
  });

  it('names each procedure by its dotted path, with its type', () => {
    const byPath = new Map(restRoutes(v1Router).map((r) => [r.procedure, r]));
    expect(byPath.get('contacts.upsert')).toMatchObject({ method: 'POST', type: 'mutation', auth: 'public', permission: 'contacts:write' });
    expect(byPath.get('contacts.get')).toMatchObject({ method: 'GET', type: 'query' });
  });

  it.each([
    ['internal', internalRouter],
    ['v1', v1Router],
  ] as const)("carries each operation's summary as trpc-to-openapi documents it for the %s router", (_name, router) => {
    const paths = (generateOpenApiDocument(router, { title: '', version: '', baseUrl: '' }).paths ?? {}) as Record<
      string,
      Record<string, { summary?: string }>
    >;
    const routes = restRoutes(router);
    // The SDK's generated internal router type shows these as each procedure's JSDoc.
    expect(routes.filter((r) => r.summary).length).toBeGreaterThan(10);
    for (const r of routes) expect(r.summary, r.procedure).toBe(paths[r.path]![r.method.toLowerCase()]!.summary);
  });

  // The meta is set by the builder that authenticates; tRPC's middleware list (read here, in a test only) is the wiring
  // it stands for. A procedure that authenticates without saying so, or says so without authenticating, fails here.
  it('marks as auth "internal" exactly the procedures that run internalProcedure', () => {
    const authMiddleware = internalProcedure._def.middlewares.at(-1);
    const procedures = internalRouter._def.procedures as unknown as Record<string, { _def: { middlewares: unknown[] } }>;
    const routes = restRoutes(internalRouter);
    expect(routes.filter((r) => r.auth === 'internal').length).toBeGreaterThan(50);
    for (const r of routes) {
      expect(r.auth === 'internal', r.procedure).toBe(procedures[r.procedure]!._def.middlewares.includes(authMiddleware));
    }
  });

  it('refuses without a credential every procedure marked auth "internal", before reading its input', async () => {
    const ctx = { header: () => undefined, setHeader: () => undefined, deps: {}, db: {} } as unknown as RequestContext;
    const caller: unknown = internalRouter.createCaller(ctx);
    const marked = restRoutes(internalRouter).filter((route) => route.auth === 'internal');
    expect(marked.length).toBeGreaterThan(50);
    for (const r of marked) {
      const call = r.procedure.split('.').reduce((node, key) => (node as Record<string, unknown>)[key], caller);
      const err = await (call as (input: unknown) => Promise<unknown>)({}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as { cause?: unknown }).cause ?? err, r.procedure).toBeInstanceOf(AppError);
      expect(((err as { cause?: AppError }).cause ?? (err as AppError)).code, r.procedure).toBe('unauthorized');
    }
  });
});

describe('the input keys of a GET', () => {
  const t = initTRPC.meta<OpenApiMeta<LeadwireMeta>>().create();
  const get = (path: `/${string}`) => t.procedure.meta({ openapi: { method: 'GET', path } });
  const out = z.object({});
  const router = t.router({
    strip: get('/strip')
      .input(z.object({ a: z.string(), b: z.number().optional() }))
      .output(out)
      .query(() => ({})),
    strict: get('/strict')
      .input(z.strictObject({ a: z.string() }))
      .output(out)
      .query(() => ({})),
    loose: get('/loose')
      .input(z.looseObject({ a: z.string() }))
      .output(out)
      .query(() => ({})),
    catchall: get('/catchall')
      .input(z.object({ a: z.string() }).catchall(z.string()))
      .output(out)
      .query(() => ({})),
    none: get('/none')
      .output(out)
      .query(() => ({})),
    void: get('/void')
      .input(z.void())
      .output(out)
      .query(() => ({})),
    defaulted: get('/defaulted')
      .input(z.object({ limit: z.coerce.number().default(10), cursor: z.string().transform((s) => s.trim()) }).optional())
      .output(out)
      .query(() => ({})),
    two: get('/two/{id}')
      .input(z.object({ id: z.string() }))
      .input(z.object({ q: z.string().optional() }))
      .output(out)
      .query(() => ({})),
  });
  const keys = Object.fromEntries(restRoutes(router).map((r) => [r.procedure, r.inputKeys ? [...r.inputKeys].sort() : null]));

  it('lists the fields of an object input, merged across .input() calls, and none for no or a void input', () => {
    expect(keys).toMatchObject({ strip: ['a', 'b'], strict: ['a'], none: [], void: [], defaulted: ['cursor', 'limit'], two: ['id', 'q'] });
  });

  it('lists none (null) for an input that takes any key, so that it is never made strict by mistake', () => {
    expect(keys).toMatchObject({ loose: null, catchall: null });
  });
});
