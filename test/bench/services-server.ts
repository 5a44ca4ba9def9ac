/**
 * Leadwire's own work without its HTTP framework, a reference for the single-upsert phase: the same services the
 * upsert route calls (`resolvePublicKey`, then `upsertContact` with the request's envelope, with their statements, events and counters) behind a bare
 * `node:http` server on a pool of the server's size. Beside the runtime's ceiling (ceiling-server.ts) and the API, it
 * splits the API's cost into what the data work costs and what Fastify, trpc-to-openapi, tRPC and zod add to it.
 *
 * Run by the bench as its own process: `node test/bench/services-server.ts <database url> <pool size>`. It prints
 * `listening <port>` and runs until SIGTERM. Errors are answered as 500 with their code, which the bench counts.
 */
import { Envelope } from '#core/auth/envelope.ts';
import { resolvePublicKey } from '#core/auth/resolve-key.ts';
import { upsertContact } from '#core/contacts/v1/upsert.ts';
import { PUBLIC_API_PER_MINUTE } from '#core/limits/plans.ts';
import { AppError } from '#core/errors.ts';
import { KeyGuard } from '#core/limits/key-guard.ts';
import { loadConfig } from '@leadwire/core';
import { openOrm, openRequestDb } from '@leadwire/db';
import { serve } from './bare-http.ts';

const [url, poolArg] = process.argv.slice(2);
if (!url || !poolArg) throw new Error('usage: services-server.ts <database url> <pool size>');
const orm = await openOrm(url, { pool: { min: 0, max: Number(poolArg) } });
// The server's request pool (openRequestDb) with the server's default time-outs: statements run as behind the API.
const c = loadConfig({ DATABASE_URL: url });
const db = await openRequestDb(orm, {
  max: Number(poolArg),
  acquireTimeoutMs: c.DB_ACQUIRE_TIMEOUT_MS,
  statementTimeoutMs: c.DB_STATEMENT_TIMEOUT_MS,
  lockTimeoutMs: c.DB_LOCK_TIMEOUT_MS,
  queryTimeoutMs: c.DB_QUERY_TIMEOUT_MS,
  transactionTimeoutMs: c.DB_TRANSACTION_TIMEOUT_MS,
});
const guard = new KeyGuard();
// As the server's guard is once its key-change listener is up (this process listens to nothing: keys do not change here).
guard.setLive(true);

serve(
  async (req, body) => {
    const now = new Date();
    const setHeader = () => {};
    const { actor, sighting } = await resolvePublicKey(db, req.headers.authorization, { now, guard, setHeader });
    const envelope = new Envelope({
      keyId: actor.apiKeyId,
      surface: 'public',
      limit: PUBLIC_API_PER_MINUTE,
      now,
      guard,
      sighting,
      setHeader,
    });
    const input = JSON.parse(body) as Parameters<typeof upsertContact>[2];
    return upsertContact(db, actor, input, { eventSource: 'api', now, envelope });
  },
  (err) => (err instanceof AppError ? err.code : 'internal_error'),
  () => orm.close(true),
);
