/**
 * Issue 19: optional OpenTelemetry traces. A real server process exports OTLP/HTTP (JSON) to a real local collector
 * stand-in: the request's server span (named by route template, the caller's traceparent as parent, the request id),
 * the SQL statements under it, and the worker's span per webhook attempt to a real receiver. Without the variables the
 * SDK is never loaded (NODE_DEBUG=module lists every CommonJS module a process loads; the SDK's packages are CommonJS).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { newSigningSecret } from '#core/webhooks/transport/secret.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { admin, killLeftovers, logLines, MAIN, run, startServer } from '../support/process.ts';
import { type Receiver, startReceiver, startSilentListener } from '../support/receiver.ts';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}
const SERVER = 2;
const CLIENT = 3;

/** A collector stand-in: every body posted to /v1/traces, kept as text (to search for leaks) and parsed. */
interface Collector {
  url: string;
  bodies: string[];
  spans(): { span: OtlpSpan; service: string }[];
  close(): Promise<void>;
}

async function startCollector(): Promise<Collector> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') bodies.push(Buffer.concat(chunks).toString());
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    spans: () =>
      bodies.flatMap((b) =>
        (JSON.parse(b).resourceSpans as any[]).flatMap((rs) => {
          const service = rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue;
          return (rs.scopeSpans as any[]).flatMap((ss) => (ss.spans as OtlpSpan[]).map((span) => ({ span, service })));
        }),
      ),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const attr = (s: OtlpSpan, key: string): string | number | boolean | undefined => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};

async function until<T>(what: string, get: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let db: TestDatabase;
let collector: Collector;
let rx: Receiver;
beforeAll(async () => {
  [db, collector, rx] = await Promise.all([createTestDatabase('tracing', { migrated: true }), startCollector(), startReceiver()]);
});
afterAll(async () => {
  await killLeftovers();
  await Promise.all([db?.drop(), collector?.close(), rx?.close()]);
});

async function bootstrapWithEndpoint(url: string): Promise<{ publicKey: string; secret: string }> {
  const boot = await admin(
    ['bootstrap', '--org', 'Traced', '--email', `traced-${Date.now()}@example.com`, '--password', 'traced test password'],
    {
      DATABASE_URL: db.url,
    },
  );
  expect(boot.code).toBe(0);
  const { orgId, publicKey } = JSON.parse(boot.stdout) as { orgId: string; publicKey: string };
  const secret = newSigningSecret();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(
      `insert into webhook_endpoints (organization_id, kind, url, events, enabled, failure_count, secret)
       values ($1, 'endpoint', $2, '{contact.created}', true, 0, $3)`,
      [orgId, url, secret],
    );
  } finally {
    await client.end();
  }
  return { publicKey, secret };
}

it('exports the request, its SQL and the webhook attempt, with no secret, parameter or query string', { timeout: 180_000 }, async () => {
  // A receiver whose path and query are its credentials, as many are.
  const { publicKey, secret } = await bootstrapWithEndpoint(`${rx.origin}/hooks/path-credential-123?token=query-credential-456`);
  const server = await startServer({
    DATABASE_URL: db.url,
    WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'leadwire-tracing-test',
    // The batch is exported within milliseconds instead of the default 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '10',
    NODE_DEBUG: 'module',
  });
  try {
    // /readyz answers as soon as the server listens; the line saying so may reach the pipe a moment later.
    await Promise.all([server.waitReady(), server.waitForOutput(/"msg":"leadwire ready"/)]);
    expect(logLines(server.stdout).find((l) => l.msg === 'leadwire ready')).toMatchObject({ tracing: true });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const email = `traced-contact-${Date.now()}@example.com`;
    const res = await fetch(`${server.origin}/api/v1/contacts/upsert`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${publicKey}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${callerSpan}-01`,
        'x-request-id': 'trace-test-request-1',
      },
      body: JSON.stringify({ email, firstName: 'Ada' }),
    });
    expect(res.status).toBe(200);
    // A query string that names a person: it must not reach the traces. Its traceparent is invalid (an all-zero trace
    // id): ignored, the request starts a trace of its own and is answered as usual.
    const search = await fetch(`${server.origin}/api/v1/contacts/search?email=${encodeURIComponent(email)}`, {
      headers: {
        authorization: `Bearer ${publicKey}`,
        traceparent: `00-${'0'.repeat(32)}-${callerSpan}-01`,
        'x-request-id': 'trace-test-search',
      },
    });
    expect(search.status).toBe(200);
    const [delivered] = await rx.waitFor(1, 60_000);
    // Our trace ids mean nothing to a third party, whose own tracing would adopt them as its parent.
    expect(delivered!.headers.traceparent).toBeUndefined();

    const serverSpan = await until(
      'the upsert span',
      () => collector.spans().find((s) => s.span.traceId === traceId && s.span.kind === SERVER)?.span,
    );
    expect(serverSpan.parentSpanId).toBe(callerSpan);
    expect(serverSpan.name).toBe('POST /api/v1/contacts/upsert');
    expect(attr(serverSpan, 'http.route')).toBe('/api/v1/contacts/upsert');
    expect(attr(serverSpan, 'http.response.status_code')).toBe(200);
    expect(attr(serverSpan, 'leadwire.request_id')).toBe('trace-test-request-1');

    const searchSpan = await until('the search span', () =>
      collector.spans().find((s) => attr(s.span, 'leadwire.request_id') === 'trace-test-search'),
    );
    expect(searchSpan.span.name).toBe('GET /api/v1/contacts/search');
    expect(searchSpan.span.parentSpanId ?? '').toBe('');
    expect(searchSpan.span.traceId).toMatch(/^(?!0+$)[0-9a-f]{32}$/);

    // Every statement of the request is a descendant of its server span, as SQL text without parameters.
    const inTrace = collector
      .spans()
      .filter((s) => s.span.traceId === traceId)
      .map((s) => s.span);
    const byId = new Map(inTrace.map((s) => [s.spanId, s]));
    const underServer = (s: OtlpSpan): boolean => {
      for (let p = s.parentSpanId; p; p = byId.get(p)?.parentSpanId) if (p === serverSpan.spanId) return true;
      return false;
    };
    const sql = inTrace.filter((s) => attr(s, 'db.system.name') === 'postgresql' || attr(s, 'db.system') === 'postgresql');
    const statements = sql.map((s) => String(attr(s, 'db.query.text') ?? attr(s, 'db.statement') ?? '')).filter(Boolean);
    // The upsert's one statement: the call of its function (the one-trip write, Migration20261128150000), without values.
    expect(statements.some((t) => /leadwire_v1_contacts_upsert\(/i.test(t))).toBe(true);
    expect(sql.every(underServer)).toBe(true);

    const attempt = await until('the attempt span', () => collector.spans().find((s) => s.span.name === 'webhook attempt'));
    expect(attempt.service).toBe('leadwire-tracing-test');
    expect(attempt.span.kind).toBe(CLIENT);
    expect(attr(attempt.span, 'leadwire.webhook.event')).toBe('contact.created');
    expect(attr(attempt.span, 'leadwire.webhook.attempt')).toBe(1);
    expect(attr(attempt.span, 'leadwire.webhook.outcome')).toBe('succeeded');
    expect(attr(attempt.span, 'http.response.status_code')).toBe(200);
    expect(attr(attempt.span, 'server.address')).toBe('127.0.0.1');

    // Nothing secret anywhere in what was exported: the key, the signing secret, the receiver's path and query
    // credentials, the contact's address (a SQL parameter in the upsert, a query string in the search).
    const exported = collector.bodies.join('\n');
    for (const secretText of [publicKey, secret, 'path-credential-123', 'query-credential-456', email, encodeURIComponent(email)])
      expect(exported).not.toContain(secretText);
    expect(server.stderr).toContain('@opentelemetry/sdk-trace-node');
  } finally {
    expect((await server.stop()).code).toBe(0);
  }
});

it('loads nothing of the SDK and exports nothing when tracing is off', { timeout: 180_000 }, async () => {
  const before = collector.bodies.length;
  // The endpoint is set, yet OTEL_SDK_DISABLED wins: the specification's master switch.
  const server = await startServer({
    DATABASE_URL: db.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SDK_DISABLED: 'true',
    NODE_DEBUG: 'module',
  });
  try {
    await Promise.all([server.waitReady(), server.waitForOutput(/"msg":"leadwire ready"/)]);
    expect((await fetch(`${server.origin}/api/v1/contacts/search?email=x@example.com`)).status).toBe(401);
    expect(logLines(server.stdout).find((l) => l.msg === 'leadwire ready')).toMatchObject({ tracing: false });
  } finally {
    expect((await server.stop()).code).toBe(0);
  }
  // The process has exited: whatever it could have exported has arrived.
  expect(collector.bodies.length).toBe(before);
  expect(server.stderr).not.toMatch(/@opentelemetry\/(sdk-trace|instrumentation|exporter)/);
});

it('keeps serving when the collector never answers, says so in the log, and still stops cleanly', { timeout: 180_000 }, async () => {
  const silent = await startSilentListener();
  const server = await startServer({
    DATABASE_URL: db.url,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${silent.port}`,
    OTEL_BSP_SCHEDULE_DELAY: '10',
    // Each export gives up after this: a hung collector costs the shutdown no more.
    OTEL_EXPORTER_OTLP_TIMEOUT: '200',
  });
  try {
    await server.waitReady();
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.origin}/api/v1/contacts/search?email=x@example.com`)).status).toBe(401);
    await server.waitForOutput(/"component":"opentelemetry"/, 60_000);
  } finally {
    expect((await server.stop()).code).toBe(0);
    await silent.close();
  }
  expect(logLines(server.stdout).some((l) => l.component === 'opentelemetry' && l.level === 40)).toBe(true);
});

it('refuses a traces protocol it does not bundle, naming the variable, before touching the database', async () => {
  const ran = await run(MAIN, [], { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'parentbased_allways_on' }, 60_000);
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf or http/json (gRPC is not bundled)');
  expect(ran.stderr).toContain('OTEL_TRACES_SAMPLER');
});
