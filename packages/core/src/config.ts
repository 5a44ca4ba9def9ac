import os from 'node:os';
import { z } from 'zod';

/** PASSWORD_HASH_CONCURRENCY's default: half the cores, at least one, so hashing never holds the whole machine. */
export const halfTheCores = (): number => Math.max(1, Math.floor(os.availableParallelism() / 2));

const optionalUrl = z.url().optional();
const port = z.coerce.number().int().min(0).max(65535);

export const ConfigSchema = z
  .object({
    PORT: port.default(3000),
    HOST: z.string().min(1).default('0.0.0.0'),
    /** The public origin plus `/api`; derived from PORT when unset. */
    BASE_URL: optionalUrl,
    /** The origin of the hosted web application; derived from PORT when unset. */
    APP_URL: optionalUrl,
    /** An external PostgreSQL; when unset an embedded one runs with its data under DATA_DIR. */
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
    // Read replicas (docs/scaling.md, "Read replicas"; docs/operating.md, "Adding a read replica").
    /**
     * PostgreSQL streaming standbys of DATABASE_URL, comma-separated: the replica-safe reads go to them (a pool each, on
     * the request path's settings). Unset: every read on the primary. The values are never echoed: they hold passwords.
     */
    DATABASE_REPLICA_URLS: z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^postgres(ql)?:\/\//, 'each must be a postgres:// URL')).max(16))
      .default([]),
    /** A replica whose replay lag is over this gets no reads until it catches up (they go to the primary). */
    DATABASE_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
    /** How often each process reads every replica's replay position and lag. */
    DATABASE_REPLICA_CHECK_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
    DATA_DIR: z.string().min(1).default('./.data'),
    ROLE: z.enum(['all', 'api', 'worker']).default('all'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DB_POOL_MAX: z.coerce.number().int().min(2).max(200).default(20),
    // Bounded database time on the request path (docs/operating.md, "A stalled database"): past these a request is answered
    // (500 save_failed for a write, 503 for a read or when no connection could be had), never left hanging.
    /** Wait for a pooled connection (or a new one to be set up); past it 503 service_unavailable with retry-after. */
    DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(3_000),
    /** PostgreSQL's statement_timeout on request connections: no request statement runs longer. */
    DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(5_000),
    /** PostgreSQL's lock_timeout on request connections: a row or advisory lock waited for longer fails the statement. */
    DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(4_000),
    /**
     * Client-side give-up per statement, for a server that does not answer at all (frozen, network gone), where its own
     * time-outs cannot fire; the connection is then destroyed, never reused. Above DB_STATEMENT_TIMEOUT_MS.
     */
    DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(6_000),
    /**
     * Total budget of a request transaction, commit included: a transaction older than this is rolled back, also on
     * the server (its commit is refused, and idle_in_transaction_session_timeout ends a session left open).
     */
    DB_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(8_000),
    /**
     * Embedded PostgreSQL that died is restarted this many times in a row (backing off) before the process exits
     * non-zero for its process manager; 0 exits at once.
     */
    DB_EMBEDDED_RESTART_ATTEMPTS: z.coerce.number().int().min(0).max(100).default(5),
    /**
     * Which proxies to believe about the client address (X-Forwarded-For): `true`, a hop count, or addresses/CIDRs
     * separated by commas. Unset: the socket's address, the only safe default when nothing sits in front.
     */
    TRUST_PROXY: z
      .string()
      .transform((v): boolean | number | string[] =>
        v === 'true'
          ? true
          : v === 'false'
            ? false
            : /^\d+$/.test(v)
              ? Number(v)
              : v
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean),
      )
      .optional(),
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
    /** Time to receive the request line and headers; past it the client gets 408 and the connection is closed. */
    HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
    /**
     * Time to receive a whole request, body included. A backstop only: slow bodies are cut by the rate and idle rules
     * below, so this leaves room for a 25 MB upload on a 256 kbit/s line (about 800 s).
     */
    HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(900_000),
    /** How long an idle keep-alive connection is kept open; behind a proxy, set it above the proxy's idle time-out. */
    HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
    /** Open connections per process, a hard cap: further ones are closed as they arrive (shedding keeps room below it). */
    HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1_000),
    // Connection abuse (apps/server/src/http/connection-guard.ts): Apache's mod_reqtimeout and nginx are the models.
    /** Time a request body gets before the minimum rate applies (mod_reqtimeout's `body=` initial time-out). */
    HTTP_BODY_GRACE_MS: z.coerce.number().int().min(10).default(10_000),
    /**
     * Each this many body bytes buy one more second after the grace; a body below it gets 408. Apache's 500 B/s is 64
     * times under a 256 kbit/s line, so real uploads never meet it while a trickle is cut at the grace. 0: off.
     */
    HTTP_BODY_MIN_RATE_BYTES_PER_S: z.coerce.number().int().min(0).default(500),
    /** A body that sends nothing for this long gets 408, however fast it was before (nginx's client_body_timeout). */
    HTTP_BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().min(10).default(15_000),
    /**
     * Open connections one client address may hold (the forwarded one behind TRUST_PROXY). Unset: 100 (or the cap
     * when smaller), a tenth of the default cap, so one machine cannot fill the table while a NAT of browsers still fits.
     */
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).optional(),
    /**
     * Above this share of HTTP_MAX_CONNECTIONS the connections that have sent the least are closed, so a newcomer
     * still finds room while slow clients hold the rest; 100 turns shedding off (newcomers over the cap are dropped).
     */
    HTTP_SHED_AT_PERCENT: z.coerce.number().int().min(1).max(100).default(90),
    /**
     * A new connection is not shed before this age while its request head is on its way (about one round trip for a
     * real client). Unset: 1 s, or half the headers time-out when that is shorter.
     */
    HTTP_SHED_MIN_AGE_MS: z.coerce.number().int().min(0).optional(),
    /**
     * /v1 refusals answered from memory (a spent window, a key not found) that one client address gets per second at
     * once; further ones are held V1_REFUSAL_DELAY_MS. A closed-loop flood re-sends the moment it is answered, so
     * refusals answered at once, however cheap, hand it every free CPU cycle.
     */
    V1_REFUSALS_FREE_PER_SECOND: z.coerce.number().int().min(1).default(20),
    /** How late such a refusal past that rate is answered; 0 turns the hold off. */
    V1_REFUSAL_DELAY_MS: z.coerce.number().int().min(0).max(10_000).default(1_000),
    /**
     * Lets webhooks reach HTTPS receivers on 127.0.0.0/8 and ::1 (local development, tests); every other private or
     * internal address stays refused. Logged loudly at start.
     */
    WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /**
     * The delivery pump's backstop poll: how long a worker's pump waits at most for a wake (new events, a manual
     * delivery) or its next due attempt before it looks anyway. It is woken, not polled, so this costs an idle
     * server two transactions per interval; it bounds how late work nobody announced is seen (a dead worker's
     * attempts, a wake lost while the LISTEN connection was down).
     */
    WEBHOOK_PUMP_INTERVAL_MS: z.coerce.number().int().min(10).max(600_000).default(30_000),
    /**
     * A comment line on every `leadwire listen` stream this often, so proxies and clients never see it idle (common
     * proxy idle time-outs are 60 s).
     */
    WEBHOOK_LISTEN_HEARTBEAT_MS: z.coerce.number().int().min(10).max(300_000).default(15_000),
    /**
     * How many of an organization's newest events an automation polling trigger (and its samples) looks through for
     * the trigger's event: bounds each poll's cost in a busy workspace; an event further back is not "recent" any more.
     */
    AUTOMATION_POLL_SCAN_EVENTS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
    /**
     * Database look-ups of API keys this process has not seen authenticate, in flight at once; more wait their turn.
     * A flood of made-up keys then holds at most this many pool connections, while a real key waits, never refused.
     */
    KEY_LOOKUP_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
    /**
     * Pause before the process's LISTEN connection (key changes, the webhook pump's wake-ups) is opened again after a
     * loss; meanwhile every key is judged by the database, nothing from memory. Short, so memory answers return
     * quickly; not zero, so a down database is not hammered.
     */
    KEY_CHANGES_RETRY_MS: z.coerce.number().int().min(10).max(600_000).default(1_000),
    /** OpenAI-compatible chat-completions endpoint for the lead-score adjustment; unset means no adjustment. */
    SCORE_ADJUSTER_URL: optionalUrl,
    SCORE_ADJUSTER_API_KEY: z.string().min(1).optional(),
    SCORE_ADJUSTER_MODEL: z.string().min(1).default('gpt-4o-mini'),
    /** How form leads without a pipeline of their form are routed: `rules` (the default pipeline) or `ai` (the adjuster's endpoint picks). */
    LEAD_ROUTER: z.enum(['rules', 'ai']).default('rules'),
    /** Where form CAPTCHA tokens are verified, per provider (the providers' own addresses; tests point them at a fake). */
    CAPTCHA_TURNSTILE_VERIFY_URL: z.url().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
    CAPTCHA_HCAPTCHA_VERIFY_URL: z.url().default('https://api.hcaptcha.com/siteverify'),
    CAPTCHA_RECAPTCHA_VERIFY_URL: z.url().default('https://www.google.com/recaptcha/api/siteverify'),
    CAPTCHA_VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
    /** log2 of scrypt's N for new password hashes: 17 is OWASP's floor; lower values are for tests and development. */
    PASSWORD_HASH_COST: z.coerce.number().int().min(12).max(20).default(17),
    // Issue 16, accounts: hashing bounds and the sign-up and reset throttles (one block, for merging).
    /**
     * Password hashes (scrypt, 128 MB each at cost 17) computed at once per process, each on a thread of its own at the
     * lowest scheduling priority (accounts/hash-workers.ts). Unset: half the cores, at least one.
     */
    PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(halfTheCores),
    /** Password checks waiting for a hashing slot; beyond it 503 service_unavailable at once, so memory stays bounded. */
    PASSWORD_HASH_QUEUE: z.coerce.number().int().min(0).max(10_000).default(16),
    /** Longest wait for a hashing slot before 503 service_unavailable: clients should not wait longer than they would retry. */
    PASSWORD_HASH_MAX_WAIT_MS: z.coerce.number().int().min(1).max(120_000).default(5_000),
    /** Sign-up attempts per client address per hour, refused or not (taken emails count): bounds email probing and organization floods. */
    SIGNUP_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).default(10),
    /** Password reset requests per client address per hour: bounds reset-email floods across many inboxes. */
    PASSWORD_RESET_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).default(10),
    /**
     * clamd (ClamAV daemon) that scans uploads over INSTREAM. Unset: contact files are refused with 503
     * scanner_unavailable, and contact photos are accepted on their image signature alone.
     */
    CLAMAV_HOST: z.string().min(1).optional(),
    CLAMAV_PORT: port.default(3310),
    CLAMAV_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
    /** `log` writes outbound texts to the log instead of sending; `http` posts them as JSON to SMS_PROVIDER_URL. */
    SMS_PROVIDER: z.enum(['log', 'http']).default('log'),
    SMS_PROVIDER_URL: optionalUrl,
    SMS_PROVIDER_API_KEY: z.string().min(1).optional(),
    /** The sender number outbound texts carry. */
    SMS_FROM_NUMBER: z.string().min(1).default('+15550000000'),
    /** Shared secret the provider sends in X-Provider-Secret on inbound messages; unset refuses every inbound call. */
    SMS_INBOUND_SECRET: z.string().min(16).optional(),
    /** Tracking-snippet page views accepted per organization per minute; beyond it 429 rate_limited. */
    TRACKING_PAGE_VIEWS_PER_MINUTE: z.coerce.number().int().min(1).default(1_200),
    /**
     * Outgoing mail: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://user:pass@host:465`. Unset: emails
     * are written to the log instead. The messages below never echo the value: it holds the password.
     */
    SMTP_URL: z
      .string()
      .refine((v) => URL.canParse(v) && ['smtp:', 'smtps:'].includes(new URL(v).protocol) && new URL(v).hostname !== '', {
        message: 'must be an smtp:// or smtps:// URL with a host',
      })
      .optional(),
    /** The sender of every email: `Name <address>` or a bare address. */
    MAIL_FROM: z
      .string()
      .regex(
        /^(?:[^<>\r\n]*<[^<>\s@]+@[^<>\s@]+\.[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+\.[^<>\s@]+)$/,
        'must be an address, e.g. Leadwire <no-reply@example.com>',
      )
      .optional(),
    // The changes feed (GET /v1/events).
    /** Most events a page filtered by type walks past: bounds a page's cost however rare the matching events are. */
    FEED_SCAN_WINDOW: z.coerce.number().int().min(10).max(100_000).default(1_000),
    // Prometheus metrics (docs/operating.md, "Metrics").
    /** Serve GET /metrics at all; off for a deployment that scrapes nothing (the counters still cost next to nothing). */
    METRICS_ENABLED: z
      .enum(['true', 'false'])
      .default('true')
      .transform((v) => v === 'true'),
    /** /metrics on a listener of its own (kept off the public port; a worker serves it only there); unset: on PORT. */
    METRICS_PORT: port.optional(),
    /** When set, /metrics answers only `Authorization: Bearer <token>`: for a public port that must not show traffic. */
    METRICS_TOKEN: z.string().min(16).optional(),
    // Scheduled jobs across processes (docs/operating.md, "More than one process").
    /**
     * How often each process tries to claim pg-boss's schedule pass (one process wins each time); a tick missed while
     * no process ran is sent once at the next pass. 30 is pg-boss's default; tests shorten it instead of waiting.
     */
    JOBS_CRON_INTERVAL_S: z.coerce.number().int().min(1).max(45).default(30),
    // OpenTelemetry traces (docs/operating.md, "Traces"): the standard variables that decide whether tracing runs,
    // checked here so that a typo stops the boot instead of silently tracing nothing. The SDK reads them (and the rest).
    /** `true` turns tracing off whatever else is set (the specification's master switch); unset means `false`. */
    OTEL_SDK_DISABLED: z.enum(['true', 'false']).optional(),
    /** `otlp` turns tracing on; `none` keeps it off; unset: on only when an OTLP endpoint is set. */
    OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { message: 'must be otlp or none (the only exporters bundled)' }).optional(),
    /** Base URL of the collector (`/v1/traces` is appended); setting it turns tracing on. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }).optional(),
    /** The traces URL exactly as given (nothing appended); setting it turns tracing on. */
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }).optional(),
    /** OTLP over HTTP, protobuf (the specification's default) or JSON; gRPC is not bundled. */
    OTEL_EXPORTER_OTLP_PROTOCOL: z
      .enum(['http/protobuf', 'http/json'], { message: 'must be http/protobuf or http/json (gRPC is not bundled)' })
      .optional(),
    /** The same for traces alone; wins over OTEL_EXPORTER_OTLP_PROTOCOL. */
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
      .enum(['http/protobuf', 'http/json'], { message: 'must be http/protobuf or http/json (gRPC is not bundled)' })
      .optional(),
    /** Which traces are kept; the SDK would fall back to parentbased_always_on on a typo, so it is refused here. */
    OTEL_TRACES_SAMPLER: z
      .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
      .optional(),
    /** The ratio of the *traceidratio samplers, 0 to 1. */
    OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
    /** The service name traces carry; unset: `leadwire`. */
    OTEL_SERVICE_NAME: z.string().min(1).max(200).optional(),
    // Retention (docs/operating.md, "Retention"): what the hourly cleanup deletes, in slices; 0 keeps those rows forever.
    /** Outbox events (the changes feed, timelines, automation polls) older than this go: the largest table's bound. */
    EVENT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(365),
    /** Page views older than this go: 13 months keeps a year-over-year comparison on a contact's timeline. */
    PAGE_VIEW_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(395),
    /** Views no contact claimed by then go sooner: most visitors never identify, and they serve nothing else. */
    ANONYMOUS_PAGE_VIEW_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
    /** Finished workflow runs older than this go (unfinished ones stay): the run log is for debugging an intake. */
    WORKFLOW_RUN_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
    /** The delivery log (deliveries and their attempts): long enough to recover from a month-long receiver outage. */
    DELIVERY_LOG_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
    /** The overview's hourly counts (activity_hourly): its longest chart is 30 days; two more cover its first, partial day. */
    ACTIVITY_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(32),
  })
  .refine((c) => c.HTTP_HEADERS_TIMEOUT_MS <= c.HTTP_REQUEST_TIMEOUT_MS, {
    path: ['HTTP_HEADERS_TIMEOUT_MS'],
    message: 'must not be larger than HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
  })
  .refine((c) => c.DB_QUERY_TIMEOUT_MS >= c.DB_STATEMENT_TIMEOUT_MS, {
    path: ['DB_QUERY_TIMEOUT_MS'],
    message: 'must not be smaller than DB_STATEMENT_TIMEOUT_MS (the server gives up first and says why)',
  })
  .refine((c) => c.HTTP_SHED_MIN_AGE_MS === undefined || c.HTTP_SHED_MIN_AGE_MS < c.HTTP_HEADERS_TIMEOUT_MS, {
    path: ['HTTP_SHED_MIN_AGE_MS'],
    message: 'must be smaller than HTTP_HEADERS_TIMEOUT_MS, or connections that never send a head are never shed',
  })
  .refine((c) => c.HTTP_MAX_CONNECTIONS_PER_ADDRESS === undefined || c.HTTP_MAX_CONNECTIONS_PER_ADDRESS <= c.HTTP_MAX_CONNECTIONS, {
    path: ['HTTP_MAX_CONNECTIONS_PER_ADDRESS'],
    message: 'must not be larger than HTTP_MAX_CONNECTIONS (it could never be reached)',
  })
  .refine((c) => c.SMS_PROVIDER !== 'http' || c.SMS_PROVIDER_URL, {
    path: ['SMS_PROVIDER_URL'],
    message: 'is required when SMS_PROVIDER is http',
  })
  .refine((c) => c.LEAD_ROUTER !== 'ai' || c.SCORE_ADJUSTER_URL, {
    path: ['LEAD_ROUTER'],
    message: 'ai needs SCORE_ADJUSTER_URL (the OpenAI-compatible endpoint it asks)',
  })
  .refine((c) => !c.SMTP_URL || c.MAIL_FROM, {
    path: ['MAIL_FROM'],
    message: 'is required when SMTP_URL is set',
  })
  .transform((c) => ({
    ...c,
    BASE_URL: (c.BASE_URL ?? `http://localhost:${c.PORT}/api`).replace(/\/+$/, ''),
    APP_URL: (c.APP_URL ?? `http://localhost:${c.PORT}`).replace(/\/+$/, ''),
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: c.HTTP_MAX_CONNECTIONS_PER_ADDRESS ?? Math.min(100, c.HTTP_MAX_CONNECTIONS),
    HTTP_SHED_MIN_AGE_MS: c.HTTP_SHED_MIN_AGE_MS ?? Math.min(1_000, Math.floor(c.HTTP_HEADERS_TIMEOUT_MS / 2)),
  }));

export type Config = z.output<typeof ConfigSchema>;

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Parses the environment once at boot; every problem is listed, not just the first. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset" so that `FOO= npm start` falls back to the default instead of failing.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = ConfigSchema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return result.data;
}
