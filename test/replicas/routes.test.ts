/**
 * Issue 31: the reads a replica may serve are docs/scaling.md's list, no more and no fewer, and each is a read-only
 * GET route of the surface its path names (a route renamed or removed must be taken out of the list, not go silently
 * to the primary). Which server answers them is test/replicas/standby.test.ts's.
 */
import { readFileSync } from 'node:fs';
import { restRoutes } from '#core/http/routes.ts';
import { internalRouter } from '#core/internal-router.ts';
import { parseLsn } from '#db/replicas.ts';
import { REPLICA_READS, routeKeyOf } from '#core/replicas/routes.ts';
import { v1Router } from '#core/v1-router.ts';
import { describe, expect, it } from 'vitest';

const scaling = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8');

describe('the replica-safe reads', () => {
  it("are docs/scaling.md's list", () => {
    const list = /<!-- replica-reads -->([\s\S]*?)<!-- \/replica-reads -->/.exec(scaling)?.[1] ?? '';
    const documented = [...list.matchAll(/`(GET \/api\/[^`]+)`/g)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(0);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...REPLICA_READS].sort());
  });

  it('are each a query of the surface the path names, as its meta routes it', () => {
    const routes = [
      ...restRoutes(v1Router).map((r) => ({ ...r, prefix: '/api/v1' })),
      ...restRoutes(internalRouter).map((r) => ({ ...r, prefix: '/api' })),
    ];
    for (const key of REPLICA_READS) {
      const found = routes.filter((r) => `${r.method} ${r.prefix}${r.path}` === key);
      expect([key, found.map((r) => r.type)]).toEqual([key, ['query']]);
      const [route] = found;
      // The key the middleware computes from the procedure's meta is the same.
      expect(routeKeyOf({ auth: route!.auth, openapi: { method: route!.method, path: route!.path } })).toBe(key);
    }
  });
});

describe('WAL positions', () => {
  it('compare as PostgreSQL orders them, across the 32-bit halves', () => {
    expect(parseLsn('0/1B82318')).toBe(0x1b82318n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
  });
});
