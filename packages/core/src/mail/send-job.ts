import type { Db } from '@leadwire/db';
import { z } from 'zod';
import type { Deps } from '../context.ts';
import type { JobDefinition } from '../jobs/boss.ts';
import { type Jobs, jobQueue } from '../jobs/queue.ts';
import { MailDeliveryError, type MailMessage, type Mailer, mailerFromConfig } from './mailer.ts';

export const MAIL_QUEUE = 'mail.send';

export const MailPayload = z.object({
  to: z.string().min(1).max(254),
  subject: z.string().min(1).max(500),
  text: z.string().min(1).max(20_000),
  template: z.enum(['password_reset', 'invite', 'webhook_disabled', 'consent_confirmation']),
  link: z.url(),
  unsubscribe: z.url().optional(),
});
export type MailPayload = z.infer<typeof MailPayload>;
export const mailQueue = jobQueue(MAIL_QUEUE, MailPayload);

/**
 * The payload holds the one-time link, and pg-boss keeps payloads in its job table: so the rows go soon. A sent (or
 * finally failed) email is deleted after 15 minutes; one no worker picked up within a day is dropped, by which time a
 * reset link has long expired and an inviter will have invited again. pg-boss sweeps every few minutes (boss.ts).
 */
const DELETE_AFTER_SECONDS = 15 * 60;
const RETENTION_SECONDS = 24 * 60 * 60;

/**
 * Queues an email in the caller's transaction: it exists exactly when the token it carries does. Nothing about the
 * message is logged here; the worker logs only the template and the outcome.
 */
export async function queueMail(db: Db, jobs: Jobs, message: MailMessage): Promise<void> {
  await mailQueue.send(jobs, db, MailPayload.parse(message));
}

/**
 * `mail.send`: hands one email to the configured transport. A refused or unreachable server fails the job and pg-boss
 * retries it 8 times with a doubling, jittered delay (10-20 s, 20-40 s, ... capped at 10 min): about half an hour, inside a
 * reset link's hour. Sending twice after a lost acknowledgement is possible, and harmless for these emails.
 */
export function sendMailJob(deps: Deps, transport?: Mailer): JobDefinition<MailPayload> {
  // Built on the first email: every process lists the queues, but only workers send (and warn about the log mailer).
  let mailer = transport;
  return {
    queue: mailQueue.name,
    batchSize: 10,
    retryLimit: 8,
    retryDelay: 10,
    queueOptions: {
      retryBackoff: true,
      retryDelayMax: 600,
      deleteAfterSeconds: DELETE_AFTER_SECONDS,
      retentionSeconds: RETENTION_SECONDS,
      notify: true,
    },
    parse: mailQueue.parse,
    async handle(message) {
      try {
        mailer ??= mailerFromConfig(deps.config, deps.log);
        await mailer.send(message);
      } catch (err) {
        const e = err instanceof MailDeliveryError ? err : new MailDeliveryError(err);
        deps.log.warn(
          { template: message.template, code: e.code, responseCode: e.responseCode },
          'sending an email failed; it will be retried',
        );
        throw e;
      }
      deps.log.info({ template: message.template }, 'email sent');
    },
  };
}
