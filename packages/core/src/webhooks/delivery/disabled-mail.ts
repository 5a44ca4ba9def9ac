import { qb, sql, statement, type Db } from '@leadwire/db';
import type { Jobs } from '../../jobs/queue.ts';
import { queueMail } from '../../mail/send-job.ts';

/** Active owners and admins of the organization: the people who can re-enable an endpoint. */
const RECIPIENTS = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('users')
    .select('email')
    .where('organization_id', '=', p.orgId)
    .where((eb) => eb.ref('active'))
    .where('role', 'in', [sql.lit('owner' as const), sql.lit('admin' as const)])
    .orderBy('email'),
);

export interface DisabledEndpoint {
  id: string;
  orgId: string;
  url: string;
  reason: string;
}

/** Where the mail points: the console (APP_URL) for people, the application API (BASE_URL) for developers. */
export interface MailUrls {
  appUrl: string;
  baseUrl: string;
}

/**
 * Tells the owner and admins that the engine disabled an endpoint, and why; queued in the transaction that disabled
 * it, so the mail exists exactly when the endpoint is disabled. The link is the endpoint's screen in the console, where
 * it is inspected and re-enabled; the API calls that do the same stay in the text for developers.
 */
export async function queueDisabledMail(db: Db, jobs: Jobs, urls: MailUrls, endpoint: DisabledEndpoint): Promise<void> {
  const recipients = await db.run(RECIPIENTS, { orgId: endpoint.orgId });
  const link = `${urls.appUrl}/app/webhooks/${endpoint.id}`;
  const api = `${urls.baseUrl}/webhooks/${endpoint.id}`;
  for (const { email } of recipients) {
    await queueMail(db, jobs, {
      to: email,
      subject: 'A Leadwire webhook endpoint was disabled',
      template: 'webhook_disabled',
      link,
      text:
        `Leadwire stopped delivering events to the webhook endpoint ${endpoint.url}.\n\nReason: ${endpoint.reason}\n\n` +
        `New events for it are recorded as skipped. Once the receiver works again, open the endpoint in the console, ` +
        `enable it and recover what it missed:\n\n${link}\n\n` +
        `From the API: POST ${api}/enable, then POST ${api}/recover.`,
    });
  }
}
