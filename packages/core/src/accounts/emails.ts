import type { Jobs } from '../jobs/queue.ts';
import type { MailMessage } from '../mail/mailer.ts';

/** What a service needs to send account emails: the queue their `mail.send` jobs go to, and where links point. */
export interface Postbox {
  jobs: Jobs;
  /** The application's origin: links open its pages (apps/server/src/http/pages.ts), which work without JavaScript. */
  appUrl: string;
}

/**
 * The token travels in the query string because the pages work without JavaScript, so the server must see it. It
 * stays out of our logs (requests are logged by path only), and the pages answer with `Referrer-Policy: no-referrer`
 * and load nothing from another host, so it never leaves in a Referer header.
 */
function link(appUrl: string, page: string, token: string): string {
  return `${appUrl}/${page}?token=${encodeURIComponent(token)}`;
}

export function passwordResetEmail(appUrl: string, to: string, token: string): MailMessage {
  const url = link(appUrl, 'reset-password', token);
  return {
    to,
    subject: 'Reset your Leadwire password',
    template: 'password_reset',
    link: url,
    text: `Someone asked to reset the password of your Leadwire account. Open this link within 1 hour to choose a new one:\n\n${url}\n\nIf it was not you, ignore this email: your password stays as it is.`,
  };
}

export function inviteEmail(appUrl: string, to: string, orgName: string, role: string, token: string): MailMessage {
  const url = link(appUrl, 'accept-invite', token);
  return {
    to,
    subject: `You are invited to ${orgName} on Leadwire`,
    template: 'invite',
    link: url,
    text: `You are invited to join ${orgName} on Leadwire as ${role === 'admin' ? 'an admin' : 'a member'}. Open this link within 7 days to choose a password and join:\n\n${url}`,
  };
}
