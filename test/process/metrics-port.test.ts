/**
 * A ROLE=worker process opens no HTTP port of its own; with METRICS_PORT it serves /metrics there (main.ts), with both
 * of its pools reported.
 */
import { afterAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { freePort, killLeftovers, startServer } from '../support/process.ts';
import { sampleValue, scrapeMetrics } from '../ops/prom-text.ts';

let db: TestDatabase | undefined;
afterAll(async () => {
  await killLeftovers();
  await db?.drop();
});

it('a worker serves /metrics on METRICS_PORT, with the request and job pools and the outbox backlog', { timeout: 180_000 }, async () => {
  db = await createTestDatabase('metrics-port', { migrated: true });
  const metricsPort = await freePort();
  const worker = await startServer({ DATABASE_URL: db.url, ROLE: 'worker', METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info' });
  try {
    await worker.waitForOutput(/"msg":"leadwire ready"/);
    expect(worker.stdout).toContain(`"metricsPort":${metricsPort}`);
    const origin = `http://127.0.0.1:${metricsPort}`;
    const { status, samples } = await scrapeMetrics(origin);
    expect(status).toBe(200);
    for (const pool of ['request', 'jobs'])
      expect(samples.some((s) => s.name === 'leadwire_db_pool_connections' && s.labels.pool === pool)).toBe(true);
    expect(sampleValue(samples, 'leadwire_database_up', {})).toBe(1);
    expect(sampleValue(samples, 'leadwire_outbox_pending', {})).toBe(0);
    // Only /metrics and /healthz there: the API is not served by a worker.
    expect((await fetch(`${origin}/api/v1/contacts`)).status).toBe(404);
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
  } finally {
    expect((await worker.stop()).code).toBe(0);
  }
});
