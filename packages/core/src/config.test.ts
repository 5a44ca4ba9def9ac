import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

/** loadConfig's problems for an environment that must fail. */
function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig defaults', () => {
  it('starts with nothing set', () => {
    expect(loadConfig({})).toEqual({
      PORT: 3000,
      HOST: '0.0.0.0',
      BASE_URL: 'http://localhost:3000/api',
      APP_URL: 'http://localhost:3000',
      DATA_DIR: './.data',
      DATABASE_REPLICA_URLS: [],
      DATABASE_REPLICA_MAX_LAG_MS: 30_000,
      DATABASE_REPLICA_CHECK_MS: 1_000,
      ROLE: 'all',
      LOG_LEVEL: 'info',
      METRICS_ENABLED: true,
      DB_POOL_MAX: 20,
      DB_ACQUIRE_TIMEOUT_MS: 3_000,
      DB_STATEMENT_TIMEOUT_MS: 5_000,
      DB_LOCK_TIMEOUT_MS: 4_000,
      DB_QUERY_TIMEOUT_MS: 6_000,
      DB_TRANSACTION_TIMEOUT_MS: 8_000,
      DB_EMBEDDED_RESTART_ATTEMPTS: 5,
      SHUTDOWN_TIMEOUT_MS: 10_000,
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 900_000,
      KEY_CHANGES_RETRY_MS: 1_000,
      AUTOMATION_POLL_SCAN_EVENTS: 10_000,
      KEY_LOOKUP_CONCURRENCY: 4,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000,
      HTTP_MAX_CONNECTIONS: 1_000,
      HTTP_BODY_GRACE_MS: 10_000,
      HTTP_BODY_MIN_RATE_BYTES_PER_S: 500,
      HTTP_BODY_IDLE_TIMEOUT_MS: 15_000,
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: 100,
      HTTP_SHED_AT_PERCENT: 90,
      HTTP_SHED_MIN_AGE_MS: 1_000,
      V1_REFUSALS_FREE_PER_SECOND: 20,
      V1_REFUSAL_DELAY_MS: 1_000,
      WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: false,
      SCORE_ADJUSTER_MODEL: 'gpt-4o-mini',
      LEAD_ROUTER: 'rules',
      CAPTCHA_TURNSTILE_VERIFY_URL: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
      CAPTCHA_HCAPTCHA_VERIFY_URL: 'https://api.hcaptcha.com/siteverify',
      CAPTCHA_RECAPTCHA_VERIFY_URL: 'https://www.google.com/recaptcha/api/siteverify',
      CAPTCHA_VERIFY_TIMEOUT_MS: 5_000,
      PASSWORD_HASH_COST: 17,
      PASSWORD_HASH_CONCURRENCY: Math.max(1, Math.floor(os.availableParallelism() / 2)),
      PASSWORD_HASH_QUEUE: 16,
      PASSWORD_HASH_MAX_WAIT_MS: 5_000,
      SIGNUP_PER_ADDRESS_PER_HOUR: 10,
      PASSWORD_RESET_PER_ADDRESS_PER_HOUR: 10,
      CLAMAV_PORT: 3310,
      CLAMAV_TIMEOUT_MS: 30_000,
      SMS_PROVIDER: 'log',
      SMS_FROM_NUMBER: '+15550000000',
      TRACKING_PAGE_VIEWS_PER_MINUTE: 1200,
      FEED_SCAN_WINDOW: 1000,
      WEBHOOK_PUMP_INTERVAL_MS: 30_000,
      WEBHOOK_LISTEN_HEARTBEAT_MS: 15_000,
      JOBS_CRON_INTERVAL_S: 30,
      EVENT_RETENTION_DAYS: 365,
      PAGE_VIEW_RETENTION_DAYS: 395,
      ACTIVITY_RETENTION_DAYS: 32,
      ANONYMOUS_PAGE_VIEW_RETENTION_DAYS: 30,
      WORKFLOW_RUN_RETENTION_DAYS: 90,
      DELIVERY_LOG_RETENTION_DAYS: 30,
    });
  });

  it("refuses a schedule pass interval outside pg-boss's 1-45 s", () => {
    for (const v of ['0', '46', '1.5', 'often']) expect(() => loadConfig({ JOBS_CRON_INTERVAL_S: v })).toThrow(/JOBS_CRON_INTERVAL_S/);
    expect(loadConfig({ JOBS_CRON_INTERVAL_S: '1' }).JOBS_CRON_INTERVAL_S).toBe(1);
  });

  it('takes retention bounds in whole days, 0 meaning forever, and refuses anything else', () => {
    const knobs = [
      'EVENT_RETENTION_DAYS',
      'PAGE_VIEW_RETENTION_DAYS',
      'ANONYMOUS_PAGE_VIEW_RETENTION_DAYS',
      'WORKFLOW_RUN_RETENTION_DAYS',
      'DELIVERY_LOG_RETENTION_DAYS',
    ] as const;
    for (const knob of knobs) {
      for (const v of ['-1', '1.5', 'forever', '36501']) expect(() => loadConfig({ [knob]: v })).toThrow(new RegExp(knob));
      expect(loadConfig({ [knob]: '0' })[knob]).toBe(0);
      expect(loadConfig({ [knob]: '7' })[knob]).toBe(7);
    }
  });

  it('refuses a webhook pump interval outside 10-600000 ms', () => {
    for (const v of ['0', '9', '600001', 'soon'])
      expect(() => loadConfig({ WEBHOOK_PUMP_INTERVAL_MS: v })).toThrow(/WEBHOOK_PUMP_INTERVAL_MS/);
    expect(loadConfig({ WEBHOOK_PUMP_INTERVAL_MS: '10' }).WEBHOOK_PUMP_INTERVAL_MS).toBe(10);
  });

  it('refuses a listen heartbeat outside 10-300000 ms', () => {
    for (const v of ['9', '300001', 'often'])
      expect(() => loadConfig({ WEBHOOK_LISTEN_HEARTBEAT_MS: v })).toThrow(/WEBHOOK_LISTEN_HEARTBEAT_MS/);
    expect(loadConfig({ WEBHOOK_LISTEN_HEARTBEAT_MS: '10' }).WEBHOOK_LISTEN_HEARTBEAT_MS).toBe(10);
  });

  it('gives no secret a default', () => {
    const c = loadConfig({});
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.SCORE_ADJUSTER_API_KEY).toBeUndefined();
    expect(c.SCORE_ADJUSTER_URL).toBeUndefined();
  });

  it('needs the adjuster endpoint for the AI lead router', () => {
    expect(() => loadConfig({ LEAD_ROUTER: 'ai' })).toThrow(/LEAD_ROUTER: ai needs SCORE_ADJUSTER_URL/);
    expect(loadConfig({ LEAD_ROUTER: 'ai', SCORE_ADJUSTER_URL: 'http://127.0.0.1:9/v1' }).LEAD_ROUTER).toBe('ai');
  });

  it('takes CAPTCHA verify addresses as URLs only', () => {
    expect(loadConfig({ CAPTCHA_HCAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/verify' }).CAPTCHA_HCAPTCHA_VERIFY_URL).toBe(
      'http://127.0.0.1:9/verify',
    );
    expect(() => loadConfig({ CAPTCHA_TURNSTILE_VERIFY_URL: 'not a url', CAPTCHA_VERIFY_TIMEOUT_MS: '5' })).toThrow(
      /CAPTCHA_TURNSTILE_VERIFY_URL[\s\S]*CAPTCHA_VERIFY_TIMEOUT_MS/,
    );
  });

  it('reads only the environment it is given, ignoring unrelated variables', () => {
    const c = loadConfig({ PATH: '/usr/bin', HOME: '/root', npm_config_x: 'y', PORT: '4000' });
    expect(c.PORT).toBe(4000);
    expect(c).not.toHaveProperty('PATH');
  });
});

describe('derived and normalised URLs', () => {
  it('derives BASE_URL and APP_URL from PORT when they are unset', () => {
    const c = loadConfig({ PORT: '8080' });
    expect(c.BASE_URL).toBe('http://localhost:8080/api');
    expect(c.APP_URL).toBe('http://localhost:8080');
  });

  it('keeps explicit BASE_URL and APP_URL, independent of PORT', () => {
    const c = loadConfig({ PORT: '8080', BASE_URL: 'https://api.example.com/api', APP_URL: 'https://app.example.com' });
    expect(c.BASE_URL).toBe('https://api.example.com/api');
    expect(c.APP_URL).toBe('https://app.example.com');
  });

  it('trims trailing slashes so paths can be appended', () => {
    const c = loadConfig({ BASE_URL: 'https://api.example.com/api///', APP_URL: 'https://app.example.com/' });
    expect(c.BASE_URL).toBe('https://api.example.com/api');
    expect(c.APP_URL).toBe('https://app.example.com');
    expect(`${c.BASE_URL}/v1/docs`).toBe('https://api.example.com/api/v1/docs');
  });

  it('coerces numbers from strings', () => {
    const c = loadConfig({ PORT: '0', DB_POOL_MAX: '5', SHUTDOWN_TIMEOUT_MS: '0' });
    expect(c.PORT).toBe(0);
    expect(c.DB_POOL_MAX).toBe(5);
    expect(c.SHUTDOWN_TIMEOUT_MS).toBe(0);
  });

  it('accepts postgres:// and postgresql:// database URLs', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h:5432/d' }).DATABASE_URL).toBe('postgres://u:p@h:5432/d');
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/d' }).DATABASE_URL).toBe('postgresql://h/d');
  });

  it('takes read replicas as comma-separated postgres:// URLs, and never echoes one in a refusal', () => {
    expect(loadConfig({ DATABASE_REPLICA_URLS: ' postgres://u:p@r1/d , postgresql://r2/d,' }).DATABASE_REPLICA_URLS).toEqual([
      'postgres://u:p@r1/d',
      'postgresql://r2/d',
    ]);
    const problems = problemsOf({ DATABASE_REPLICA_URLS: 'postgres://r1/d,mysql://u:secret-pw@r2/d' });
    expect(problems).toEqual(['DATABASE_REPLICA_URLS.1: each must be a postgres:// URL']);
    expect(problemsOf({ DATABASE_REPLICA_MAX_LAG_MS: '50' }).map((p) => p.split(':')[0])).toEqual(['DATABASE_REPLICA_MAX_LAG_MS']);
    expect(problemsOf({ DATABASE_REPLICA_CHECK_MS: '0' }).map((p) => p.split(':')[0])).toEqual(['DATABASE_REPLICA_CHECK_MS']);
  });
});

describe('empty strings mean unset', () => {
  it('falls back to the default for every variable set to an empty string', () => {
    const empty = {
      PORT: '',
      HOST: '',
      BASE_URL: '',
      APP_URL: '',
      DATABASE_URL: '',
      DATA_DIR: '',
      ROLE: '',
      LOG_LEVEL: '',
      DB_POOL_MAX: '',
      SHUTDOWN_TIMEOUT_MS: '',
      SCORE_ADJUSTER_URL: '',
      SCORE_ADJUSTER_API_KEY: '',
      SCORE_ADJUSTER_MODEL: '',
    };
    expect(loadConfig(empty)).toEqual(loadConfig({}));
  });

  it('treats undefined like unset', () => {
    expect(loadConfig({ PORT: undefined, DATABASE_URL: undefined })).toEqual(loadConfig({}));
  });

  it('derives the URLs from PORT when they are empty', () => {
    expect(loadConfig({ PORT: '5000', BASE_URL: '', APP_URL: '' }).BASE_URL).toBe('http://localhost:5000/api');
  });
});

describe('bad values', () => {
  it('lists every problem at once, each naming its variable', () => {
    const problems = problemsOf({
      PORT: 'abc',
      ROLE: 'boss',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://h/d',
      BASE_URL: 'not a url',
      APP_URL: 'also not',
      DB_POOL_MAX: '1',
      SHUTDOWN_TIMEOUT_MS: '-1',
      SCORE_ADJUSTER_URL: 'nope',
    });
    const vars = problems.map((p) => p.split(':')[0]);
    expect(vars.sort()).toEqual(
      [
        'PORT',
        'ROLE',
        'LOG_LEVEL',
        'DATABASE_URL',
        'BASE_URL',
        'APP_URL',
        'DB_POOL_MAX',
        'SHUTDOWN_TIMEOUT_MS',
        'SCORE_ADJUSTER_URL',
      ].sort(),
    );
    for (const p of problems) expect(p).toMatch(/^[A-Z_]+: .+/);
  });

  it('puts every problem in the error message, one per line', () => {
    try {
      loadConfig({ PORT: 'abc', ROLE: 'boss' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as ConfigError).message;
      expect(message).toMatch(/^Invalid configuration:\n/);
      expect(message).toMatch(/\n {2}- PORT: /);
      expect(message).toMatch(/\n {2}- ROLE: /);
    }
  });

  it('refuses out-of-range and non-integer numbers', () => {
    for (const PORT of ['-1', '65536', '80.5', '1e10']) expect(problemsOf({ PORT }).map((p) => p.split(':')[0])).toEqual(['PORT']);
    for (const DB_POOL_MAX of ['1', '201', 'x']) expect(problemsOf({ DB_POOL_MAX }).map((p) => p.split(':')[0])).toEqual(['DB_POOL_MAX']);
    for (const PASSWORD_HASH_COST of ['11', '21', '16.5'])
      expect(problemsOf({ PASSWORD_HASH_COST }).map((p) => p.split(':')[0])).toEqual(['PASSWORD_HASH_COST']);
  });

  it('hashes on half the cores unless told otherwise; refuses no slot at all', () => {
    expect(loadConfig({ PASSWORD_HASH_CONCURRENCY: '4' }).PASSWORD_HASH_CONCURRENCY).toBe(4);
    expect(problemsOf({ PASSWORD_HASH_CONCURRENCY: '0' }).map((p) => p.split(':')[0])).toEqual(['PASSWORD_HASH_CONCURRENCY']);
    expect(problemsOf({ PASSWORD_HASH_QUEUE: '-1' }).map((p) => p.split(':')[0])).toEqual(['PASSWORD_HASH_QUEUE']);
  });

  it('refuses a headers time-out longer than the whole request time-out', () => {
    expect(problemsOf({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' }).map((p) => p.split(':')[0])).toEqual([
      'HTTP_HEADERS_TIMEOUT_MS',
    ]);
    expect(loadConfig({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true' }).WEBHOOKS_UNSAFE_ALLOW_LOOPBACK).toBe(true);
    expect(problemsOf({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'yes' }).map((p) => p.split(':')[0])).toEqual(['WEBHOOKS_UNSAFE_ALLOW_LOOPBACK']);
    expect(problemsOf({ HTTP_MAX_CONNECTIONS: '0' }).map((p) => p.split(':')[0])).toEqual(['HTTP_MAX_CONNECTIONS']);
  });

  it('refuses a client-side query time-out shorter than the server statement time-out', () => {
    expect(problemsOf({ DB_STATEMENT_TIMEOUT_MS: '5000', DB_QUERY_TIMEOUT_MS: '4000' }).map((p) => p.split(':')[0])).toEqual([
      'DB_QUERY_TIMEOUT_MS',
    ]);
    expect(problemsOf({ DB_ACQUIRE_TIMEOUT_MS: '0' }).map((p) => p.split(':')[0])).toEqual(['DB_ACQUIRE_TIMEOUT_MS']);
  });

  it('relates the connection guard to the limits it works under', () => {
    // Derived defaults follow the settings they depend on, so a small test configuration stays valid.
    expect(loadConfig({ HTTP_MAX_CONNECTIONS: '2', HTTP_HEADERS_TIMEOUT_MS: '400' })).toMatchObject({
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: 2,
      HTTP_SHED_MIN_AGE_MS: 200,
    });
    // Set explicitly, they must make sense: a silent connection is cut at the headers time-out, before it could be shed.
    expect(problemsOf({ HTTP_SHED_MIN_AGE_MS: '10000' }).map((p) => p.split(':')[0])).toEqual(['HTTP_SHED_MIN_AGE_MS']);
    expect(problemsOf({ HTTP_MAX_CONNECTIONS: '50', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '51' }).map((p) => p.split(':')[0])).toEqual([
      'HTTP_MAX_CONNECTIONS_PER_ADDRESS',
    ]);
    for (const HTTP_SHED_AT_PERCENT of ['0', '101', '50.5'])
      expect(problemsOf({ HTTP_SHED_AT_PERCENT }).map((p) => p.split(':')[0])).toEqual(['HTTP_SHED_AT_PERCENT']);
    expect(loadConfig({ HTTP_BODY_MIN_RATE_BYTES_PER_S: '0' }).HTTP_BODY_MIN_RATE_BYTES_PER_S).toBe(0);
  });

  it('does not echo a bad value back, so a secret in it never reaches the log', () => {
    const secret = 'hunter2-very-secret';
    const problems = problemsOf({ DATABASE_URL: `mysql://admin:${secret}@db/app`, SCORE_ADJUSTER_URL: `not-a-url-${secret}` });
    expect(problems.join('\n')).not.toContain(secret);
  });
});

describe('TRUST_PROXY', () => {
  it('reads true, a hop count, or a list of addresses', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).TRUST_PROXY).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(loadConfig({}).TRUST_PROXY).toBeUndefined();
  });
});
