/**
 * Type checks of the typed job sends, compiled by `tsc -p tsconfig.json` (and so by `npm test`'s type check), never
 * run. Every `@ts-expect-error` below must meet an error on its next line, or tsc fails on the unused directive: a send
 * that names a queue by a string, or carries another shape than its queue's payload, keeps failing the build.
 */
import type { Db } from '@leadwire/db';
import type { Jobs } from '../../jobs/queue.ts';
import { mailQueue } from '../../mail/send-job.ts';
import { adjustScoreQueue } from './adjust-score-job.ts';

declare const jobs: Jobs;
declare const db: Db;

export const sent = adjustScoreQueue.send(jobs, db, { contactIds: ['3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10'] });
export const sentThroughJobs = jobs.send(db, adjustScoreQueue, { contactIds: [] });

// @ts-expect-error: contact ids are strings
export const wrongType = adjustScoreQueue.send(jobs, db, { contactIds: [1] });

// @ts-expect-error: the payload lacks contactIds
export const missingField = jobs.send(db, adjustScoreQueue, {});

// @ts-expect-error: a field the payload does not have
export const extraField = jobs.send(db, adjustScoreQueue, { contactIds: [], contactId: 'x' });

// @ts-expect-error: a queue is named by its JobQueue, never by a string
export const byName = jobs.send(db, 'contact.adjust-score', { contactIds: [] });

// @ts-expect-error: another queue's payload (a mail's) on the score queue
export const otherPayload = jobs.sendMany(db, adjustScoreQueue, [{ to: 'a@example.com' }]);

// @ts-expect-error: a template the mail queue does not know
export const wrongTemplate = mailQueue.send(jobs, db, { to: 'a@b.c', subject: 's', text: 't', template: 'welcome', link: 'https://x.y' });
