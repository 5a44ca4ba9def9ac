/**
 * Leadwire's own work without its HTTP framework, a reference for the single-upsert phase: the same services the
 * upsert route calls (`authenticate`, then `upsertContact`, with their statements, events and counters) behind a bare
 * `node:http` server on a pool of the server's size. Beside the runtime's ceiling (ceiling-server.ts) and the API, it
 * splits the API's cost into what the data work costs and what Fastify, trpc-to-openapi, tRPC and zod add to it.
 *
 * Run by the bench as its own process: `node test/bench/services-server.ts <database url> <pool size>`. It prints
 * `listening <port>` and runs until SIGTERM. Errors are answered as 500 with their code, which the bench counts.
 */
import { authenticate } from '#core/auth/authenticate.ts';
import { upsertContact } from '#core/contacts/v1/upsert.ts';
import { AppError } from '#core/errors.ts';
import { KeyGuard } from '#core/limits/key-guard.ts';
import { openDb, openOrm } from '@leadwire/db';
import { serve } from './bare-http.ts';

const [url, poolArg] = process.argv.slice(2);
if (!url || !poolArg) throw new Error('usage: services-server.ts <database url> <pool size>');
const orm = await openOrm(url, { pool: { min: 0, max: Number(poolArg) } });
const db = await openDb(orm);
const guard = new KeyGuard();

serve(
  async (req, body) => {
    const now = new Date();
    const auth = await authenticate(db, req.headers.authorization, 'public', { now, guard, setHeader: () => {} });
    const r = await upsertContact(db, auth.actor, JSON.parse(body) as Parameters<typeof upsertContact>[2], { eventSource: 'api', now });
    return { id: r.id, created: r.created, matchedBy: r.matchedBy };
  },
  (err) => (err instanceof AppError ? err.code : 'internal_error'),
  () => orm.close(true),
);
