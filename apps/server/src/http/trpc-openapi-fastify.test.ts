import type { AddressInfo } from 'node:net';
import { initTRPC } from '@trpc/server';
import Fastify, { type FastifyInstance } from 'fastify';
import { type CreateOpenApiFastifyPluginOptions, fastifyTRPCOpenApiPlugin, type OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addJsonBodyParser } from './json-body.ts';
import { isBodiless, patchTrpcOpenApiFastify, trpcOpenApiPlugin } from './trpc-openapi-fastify.ts';

/**
 * Each patch of trpc-to-openapi-fastify.ts, on trpc-to-openapi's Fastify adapter alone (no Leadwire surface): the bare
 * adapter shows the failure the patch exists for, the patched one its absence. When an upgrade fixes the adapter, the
 * "bare" expectation fails: the patch can go. When an upgrade changes what a patch relies on, the "patched" one fails.
 */
const t = initTRPC.meta<OpenApiMeta>().create();
const router = t.router({
  quick: t.procedure
    .meta({ openapi: { method: 'GET', path: '/quick' } })
    .input(z.object({}))
    .output(z.object({ ok: z.boolean() }))
    .query(() => ({ ok: true })),
  echo: t.procedure
    .meta({ openapi: { method: 'POST', path: '/echo' } })
    .input(z.object({ n: z.number().optional() }))
    .output(z.object({ n: z.number().optional() }))
    .mutation(({ input }) => input),
});

interface Served {
  app: FastifyInstance;
  origin: string;
  /** The request signal tRPC made for the latest request, and the close of its raw response (after tRPC's listener). */
  latest: { signal?: AbortSignal; closed: Promise<void> };
}

async function serve(patched: boolean): Promise<Served> {
  const app = Fastify();
  const latest: Served['latest'] = { closed: Promise.resolve() };
  app.addHook('onRequest', async (_req, reply) => {
    latest.closed = new Promise((resolve) => reply.raw.once('close', () => setImmediate(resolve)));
  });
  if (patched) {
    addJsonBodyParser(app, { empty: (req) => (isBodiless(req) ? { value: {} } : undefined) });
    patchTrpcOpenApiFastify(app);
  }
  await app.register(patched ? trpcOpenApiPlugin : fastifyTRPCOpenApiPlugin, {
    basePath: '/',
    router,
    createContext: ({ info }) => {
      latest.signal = info.signal;
      return {};
    },
  } satisfies CreateOpenApiFastifyPluginOptions<typeof router>);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, latest };
}

describe("trpc-to-openapi's Fastify adapter, bare and patched", () => {
  let bare: Served;
  let patched: Served;
  beforeAll(async () => {
    bare = await serve(false);
    patched = await serve(true);
  });
  afterAll(async () => {
    await bare?.app.close();
    await patched?.app.close();
  });

  const answeredSignal = async (s: Served) => {
    const res = await fetch(`${s.origin}/quick`);
    expect(await res.json()).toEqual({ ok: true });
    await s.latest.closed;
    return s.latest.signal;
  };

  it('writableEnded: the bare adapter aborts the signal of a request it answered; patched, it does not', async () => {
    expect((await answeredSignal(bare))?.aborted).toBe(true);
    const signal = await answeredSignal(patched);
    expect(signal).toBeDefined();
    expect(signal?.aborted).toBe(false);
  });

  const post = (s: Served, init: RequestInit) => fetch(`${s.origin}/echo`, { method: 'POST', ...init });

  it('content type case: the bare adapter refuses `Application/JSON` with 415; patched, it reads the body', async () => {
    const init = { headers: { 'content-type': 'Application/JSON' }, body: '{"n":1}' };
    expect((await post(bare, init)).status).toBe(415);
    const res = await post(patched, init);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ n: 1 });
  });

  it('bodiless POST: the bare adapter refuses a POST without body or content type with 415; patched, it is {}', async () => {
    const res = await post(bare, {});
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ message: 'Missing content-type header' });
    const ok = await post(patched, {});
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({});
  });
});

describe("the adapter's start-up check of the router", () => {
  // A router the OpenAPI generator refuses: the path names a parameter the input does not have.
  const refused = t.router({
    item: t.procedure
      .meta({ openapi: { method: 'GET', path: '/items/{id}' } })
      .input(z.object({}))
      .output(z.object({}))
      .query(() => ({})),
  });
  /** Calls `plugin` as Fastify would (it creates its handler synchronously): the error it throws, if any. */
  const install = (plugin: typeof fastifyTRPCOpenApiPlugin): unknown => {
    try {
      plugin(Fastify(), { basePath: '/', router: refused } satisfies CreateOpenApiFastifyPluginOptions<typeof refused>, () => {});
      return undefined;
    } catch (err) {
      return err;
    }
  };

  it('the bare adapter generates the whole document to validate the router (NODE_ENV not production); patched, it does not', () => {
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = 'test';
    try {
      expect(String(install(fastifyTRPCOpenApiPlugin))).toContain('Input parser expects key from path: "id"');
      expect(install(trpcOpenApiPlugin)).toBeUndefined();
      // Only for the call: the process's NODE_ENV is left as it was.
      expect(process.env.NODE_ENV).toBe('test');
    } finally {
      if (env === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = env;
    }
  });
});
