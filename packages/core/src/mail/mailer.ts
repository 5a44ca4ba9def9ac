import type { Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import type { Logger } from '../context.ts';

/** One outgoing email. `link` is the action the email exists for, kept apart so templates and tests need not parse text. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** Which kind of email this is, for templating and delivery metrics. */
  template: 'password_reset' | 'invite' | 'webhook_disabled' | 'consent_confirmation';
  /** The one-time link; it carries a secret token, so nothing but the mailer may log or store it. */
  link: string;
  /**
   * A mail to a contact (consent): its unsubscribe link, also sent as `List-Unsubscribe` with RFC 8058 one-click
   * (`List-Unsubscribe-Post`), so mail clients offer it; a secret like `link`.
   */
  unsubscribe?: string | undefined;
}

/** Where the application's emails go. Implementations must treat `link` as a secret. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * The development mailer: sends nothing and writes the email, link included, to the log so a developer can follow it.
 * This is the only place a reset or invitation link is ever logged, and it is used only while SMTP_URL is unset.
 */
export function createLogMailer(log: Logger): Mailer {
  return {
    send: async ({ to, subject, template, link }) => {
      log.info({ mail: { to, subject, template, link } }, 'development mailer: email not sent, its link is logged here');
    },
  };
}

/**
 * A delivery failure as it may be logged: the SMTP stage and reply code only. nodemailer's messages can quote the
 * server's reply, which may echo the envelope, and its errors carry the connection options; neither is logged.
 */
export class MailDeliveryError extends Error {
  readonly code: string;
  readonly responseCode: number | undefined;
  constructor(err: unknown) {
    const e = (err ?? {}) as { code?: unknown; responseCode?: unknown };
    const code = typeof e.code === 'string' ? e.code : 'unknown';
    const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
    super(`SMTP delivery failed: ${code}${responseCode ? ` (${responseCode})` : ''}`);
    this.name = 'MailDeliveryError';
    this.code = code;
    this.responseCode = responseCode;
  }
}

/**
 * Bounds on one delivery. nodemailer's defaults (2 min to connect, 10 min of socket silence) would hold a worker slot
 * long after the job should have failed and been retried.
 */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * Sends through an SMTP server: `smtp://` upgrades with STARTTLS when the server offers it, `smtps://` is TLS from the
 * first byte; credentials come from the URL. The transport's own logger stays off: it would print the message and the
 * AUTH exchange.
 */
export function createSmtpMailer(opts: { url: string; from: string }): Mailer {
  // nodemailer is loaded with the first email rather than with every process (some 40 modules, about 60 ms of a
  // start): most starts send none, and a process that is never configured for SMTP never needs it. SMTP_URL's form is
  // checked when the configuration is read (config.ts), so nothing about it is learnt later than before.
  let transport: Promise<Transporter> | undefined;
  const transportOnce = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) =>
      createTransport({
        url: opts.url,
        logger: false,
        debug: false,
        connectionTimeout: CONNECTION_TIMEOUT_MS,
        greetingTimeout: GREETING_TIMEOUT_MS,
        socketTimeout: SOCKET_TIMEOUT_MS,
      }),
    ));
  return {
    send: async (m) => {
      try {
        await (await transportOnce()).sendMail({
          from: opts.from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          headers: {
            'X-Leadwire-Template': m.template,
            ...(m.unsubscribe ? { 'List-Unsubscribe': `<${m.unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {}),
          },
        });
      } catch (err) {
        throw new MailDeliveryError(err);
      }
    },
  };
}

/** The SMTP mailer when SMTP_URL is set, else the development log mailer (with a warning when it is built). */
export function mailerFromConfig(config: Config, log: Logger): Mailer {
  if (config.SMTP_URL && config.MAIL_FROM) return createSmtpMailer({ url: config.SMTP_URL, from: config.MAIL_FROM });
  log.warn({}, 'SMTP_URL is not set: emails are not sent, they are written to this log with their links');
  return createLogMailer(log);
}
