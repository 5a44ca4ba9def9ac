import type { Logger } from '../context.ts';
import type { MailMessage, Mailer } from '../mail/mailer.ts';

/** What a service needs to send account emails; built by the router from the request's deps. */
export interface Postbox {
  mailer: Mailer;
  /** The hosted application's origin: links point at its pages, which post the token back to the API. */
  appUrl: string;
  log: Logger;
}

/**
 * The token travels in the fragment: browsers never send it to a server, so it stays out of access logs, proxies and
 * Referer headers; the page reads it and posts it in a JSON body.
 */
function link(appUrl: string, page: string, token: string): string {
  return `${appUrl}/${page}#token=${token}`;
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
