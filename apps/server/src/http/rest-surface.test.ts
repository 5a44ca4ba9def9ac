import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Deps } from '@leadwire/core';
import { initTRPC } from '@trpc/server';
import Fastify, { type FastifyInstance } from 'fastify';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { restSurface } from './rest-surface.ts';

/**
 * tRPC gives each REST request an AbortSignal that must abort when the client goes away mid-request, and not merely
 * because the answer was sent (an abort builds an AbortError with its stack: a cost on every request). Aborts are
 * counted on AbortController itself, since trpc-to-openapi keeps the signal to itself; only those made from tRPC's code
 * count, since the worker runs other files before this one (isolate: false) and what they leave running may abort
 * controllers of its own (4 such in a full run). A minimal router on the real surface, over real HTTP.
 */
const t = initTRPC.meta<OpenApiMeta>().create();
let started: () => void = () => undefined;
let release: () => void = () => undefined;

const router = t.router({
  quick: t.procedure
    .meta({ openapi: { method: 'GET', path: '/quick' } })
    .input(z.object({}))
    .output(z.object({ ok: z.boolean() }))
    .query(() => ({ ok: true })),
  slow: t.procedure
    .meta({ openapi: { method: 'GET', path: '/slow' } })
    .input(z.object({}))
    .output(z.object({ ok: z.boolean() }))
    .query(async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      return { ok: true };
    }),
});

describe('the REST surface and the request signal', () => {
  let app: FastifyInstance;
  let port: number;
  /** Resolves once the raw response of the latest request has closed (after tRPC's own close listener ran). */
  let closed: Promise<void> = Promise.resolve();
  let aborts = 0;
  const abort = Object.getOwnPropertyDescriptor(AbortController.prototype, 'abort')!;

  beforeAll(async () => {
    Object.defineProperty(AbortController.prototype, 'abort', {
      ...abort,
      value(this: AbortController, reason?: unknown) {
        if (/[\\/]@?trpc/.test(new Error().stack ?? '')) aborts++;
        (abort.value as AbortController['abort']).call(this, reason);
      },
    });
    app = Fastify();
    app.addHook('onRequest', async (_req, reply) => {
      closed = new Promise((resolve) => reply.raw.once('close', () => setImmediate(resolve)));
    });
    // The surface reads nothing of its dependencies until a procedure's context uses them, and these use none.
    await app.register(async (scope) => restSurface(scope, { deps: {} as Deps, router }), { prefix: '/api' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    Object.defineProperty(AbortController.prototype, 'abort', abort);
    await app?.close();
  });

  it('aborts nothing for requests that were answered', async () => {
    aborts = 0;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/quick`);
      expect(await res.json()).toEqual({ ok: true });
      await closed;
    }
    expect(aborts).toBe(0);
  });

  it('aborts when the client disconnects before the answer', async () => {
    aborts = 0;
    const running = new Promise<void>((resolve) => (started = resolve));
    const req = http.get(`http://127.0.0.1:${port}/api/slow`);
    req.on('error', () => undefined); // the socket is destroyed below on purpose
    await running;
    req.destroy();
    await closed;
    // The signal, and the fetch Request's own signal that follows it.
    expect(aborts).toBeGreaterThan(0);
    release();
  });
});
