import type { Deps, Logger } from '../context.ts';

/** One outgoing email. `link` is the action the email exists for, kept apart so templates and tests need not parse text. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** Which kind of email this is, for templating and delivery metrics. */
  template: 'password_reset' | 'invite';
  /** The one-time link; it carries a secret token, so nothing but the mailer may log or store it. */
  link: string;
}

/** Where the application's emails go. Implementations must treat `link` as a secret. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * The default development mailer: sends nothing and writes the email, link included, to the log so a developer can
 * follow it. This is the only place a reset or invitation link is ever logged; register a real mailer in production.
 */
export function createLogMailer(log: Logger): Mailer {
  return {
    send: async ({ to, subject, template, link }) => {
      log.info({ mail: { to, subject, template, link } }, 'development mailer: email not sent, its link is logged here');
    },
  };
}

// Deps is shared by every module; keeping the mailer beside it (rather than in it) lets a process or a test choose one
// without touching the composition root.
const mailers = new WeakMap<Deps, Mailer>();

/** Registers the mailer the application sends with for these deps (production transport, or a test's inbox). */
export function setMailer(deps: Deps, mailer: Mailer): void {
  mailers.set(deps, mailer);
}

/** The registered mailer, or the development log mailer when none was registered. */
export function mailerFor(deps: Deps): Mailer {
  let mailer = mailers.get(deps);
  if (!mailer) {
    mailer = createLogMailer(deps.log);
    mailers.set(deps, mailer);
  }
  return mailer;
}
