import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Logger } from '../context.ts';

export interface SmsMessage {
  to: string;
  from: string;
  body: string;
}

/** Sends one text. Rejects when the provider did not accept it; the caller records the message as failed. */
export interface SmsProvider {
  send(message: SmsMessage): Promise<{ providerMessageId: string }>;
}

/** Development: nothing leaves the machine. The body only at debug, so an info log never holds message contents. */
export class LogSmsProvider implements SmsProvider {
  readonly log: Logger;
  constructor(log: Logger) {
    this.log = log;
  }
  async send(message: SmsMessage) {
    const providerMessageId = `log-${randomUUID()}`;
    this.log.info({ to: message.to, from: message.from, chars: message.body.length, providerMessageId }, 'sms not sent (log provider)');
    this.log.debug({ providerMessageId, body: message.body }, 'sms body');
    return { providerMessageId };
  }
}

export class SmsSendError extends Error {
  readonly status: number | undefined;
  constructor(message: string, status?: number, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SmsSendError';
    this.status = status;
  }
}

export interface HttpSmsProviderOptions {
  url: string;
  apiKey?: string | undefined;
  /** Whole-request budget; a text that is not accepted in time is recorded as failed. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * A generic gateway: POST `{ to, from, body }` as JSON with the API key as a bearer token; a 2xx answer carrying `id`
 * (or `providerMessageId`) means accepted. Errors never include the key.
 */
export class HttpSmsProvider implements SmsProvider {
  readonly opts: HttpSmsProviderOptions;
  constructor(opts: HttpSmsProviderOptions) {
    this.opts = opts;
  }
  async send(message: SmsMessage) {
    let res: Response;
    try {
      res = await fetch(this.opts.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        body: JSON.stringify({ to: message.to, from: message.from, body: message.body }),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw new SmsSendError(timedOut ? 'SMS provider timed out' : 'SMS provider unreachable', undefined, err);
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) throw new SmsSendError(`SMS provider answered ${res.status}`, res.status);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new SmsSendError('SMS provider answered without JSON', res.status);
    }
    const id =
      (parsed as { id?: unknown; providerMessageId?: unknown } | null)?.id ??
      (parsed as { providerMessageId?: unknown } | null)?.providerMessageId;
    if (typeof id !== 'string' && typeof id !== 'number') throw new SmsSendError('SMS provider answered without a message id', res.status);
    return { providerMessageId: String(id) };
  }
}

const providers = new WeakMap<Config, SmsProvider>();

/** The configured provider, built once per configuration. */
export function smsProviderFor(config: Config, log: Logger): SmsProvider {
  let provider = providers.get(config);
  if (!provider) {
    provider =
      config.SMS_PROVIDER === 'http' && config.SMS_PROVIDER_URL
        ? new HttpSmsProvider({ url: config.SMS_PROVIDER_URL, apiKey: config.SMS_PROVIDER_API_KEY })
        : new LogSmsProvider(log);
    providers.set(config, provider);
  }
  return provider;
}
