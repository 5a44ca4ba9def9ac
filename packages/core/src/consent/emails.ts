import type { MailMessage } from '../mail/mailer.ts';

/** The links' pages live at the app address (apps/server/src/http/consent-pages.ts) and work without JavaScript. */
export const confirmUrl = (appUrl: string, token: string) => `${appUrl}/consent/confirm?token=${encodeURIComponent(token)}`;
export const withdrawUrl = (appUrl: string, token: string) => `${appUrl}/consent/withdraw?token=${encodeURIComponent(token)}`;

/**
 * The double opt-in mail: what the person ticked, word for word, the link that confirms it (the page asks once more,
 * so a mail scanner opening the link confirms nothing) and the unsubscribe link every consent mail carries.
 */
export function confirmationEmail(opts: {
  to: string;
  orgName: string;
  texts: string[];
  confirm: string;
  unsubscribe: string;
  days: number;
}): MailMessage {
  const asked = opts.texts.map((t) => `  - ${t}`).join('\n');
  return {
    to: opts.to,
    subject: `Please confirm your subscription to ${opts.orgName}`,
    template: 'consent_confirmation',
    link: opts.confirm,
    unsubscribe: opts.unsubscribe,
    text: `You ticked this on a form of ${opts.orgName}:\n\n${asked}\n\nTo confirm, open this link within ${opts.days} days and press Confirm:\n\n${opts.confirm}\n\nIf it was not you, ignore this email: nothing is confirmed without you.\n\nUnsubscribe at any time: ${opts.unsubscribe}`,
  };
}
