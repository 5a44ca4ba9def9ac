import type { Deps, Logger } from '@leadwire/core';
import { RESET_REQUEST_QUEUE } from '#core/accounts/password.service.ts';
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { MAIL_QUEUE } from '#core/mail/send-job.ts';
import { initTestApp, type TestApp } from '../support/app.ts';
import { type SmtpInbox, startSmtpInbox } from './smtp-inbox.ts';

export const MAIL_FROM = 'Leadwire Accounts <accounts@leadwire.test>';
export const SENDER = 'accounts@leadwire.test';

/** A logger that keeps every line as JSON, so tests can search everything that was logged. */
export function captureLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (obj: object, msg?: string) => void lines.push(JSON.stringify({ ...obj, msg }));
  return { lines, info: keep, warn: keep, error: keep, debug: keep };
}

/**
 * Starts the application's own mail and reset-request workers, as `npm start` registers them (jobDefinitions): the
 * transport comes from the app's configuration (SMTP_URL, MAIL_FROM).
 */
export async function startMailWorkers(t: TestApp, log?: Logger): Promise<void> {
  const deps: Deps = log ? { ...t.runtime.deps, log } : t.runtime.deps;
  await t.runtime.boss.work(jobDefinitions(deps).filter((d) => d.queue === MAIL_QUEUE || d.queue === RESET_REQUEST_QUEUE));
}

/** An app whose mail goes to a real SMTP server of its own, with the application's mail workers running. */
export interface MailApp {
  t: TestApp;
  smtp: SmtpInbox;
  /** Closes the app, then the SMTP server. */
  close(): Promise<void>;
}

/**
 * A file's mail set-up: an SMTP inbox, an app configured for it (SMTP_URL, MAIL_FROM; APP_URL, where the mails' links
 * point, `https://app.leadwire.test` unless `env` says otherwise) and its mail workers (`startMailWorkers`).
 */
export async function startMailApp(env: Record<string, string> = {}, log?: Logger): Promise<MailApp> {
  const smtp = await startSmtpInbox();
  let t: TestApp | undefined;
  try {
    t = await initTestApp({ APP_URL: 'https://app.leadwire.test', ...env, SMTP_URL: smtp.url, MAIL_FROM });
    await startMailWorkers(t, log);
  } catch (err) {
    await t?.close();
    await smtp.close();
    throw err;
  }
  const app = t;
  return {
    t: app,
    smtp,
    close: async () => {
      await app.close();
      await smtp.close();
    },
  };
}

export interface JobRow {
  id: string;
  state: string;
  retry_count: number;
  start_after: Date;
  data: Record<string, unknown>;
  output: unknown;
}

/**
 * Waits for the queue to reach a state, reading pg-boss's table: a job's progress is only visible there. Polls every
 * 50 ms; the test's own time-out bounds the wait.
 */
export async function waitForJob(t: TestApp, queue: string, where: (job: JobRow) => boolean): Promise<JobRow> {
  for (;;) {
    const rows = await t.sql<JobRow>(
      'select id, state, retry_count, start_after, data, output from pgboss.job where name = ? order by created_on',
      [queue],
    );
    const hit = rows.find(where);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 50));
  }
}
