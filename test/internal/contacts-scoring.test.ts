import { ADJUST_SCORE_QUEUE } from '#core/contacts/shared/adjust-score-job.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, type TestOrg } from './contacts-support.ts';

let t: TestApp;
let org: TestOrg;

// An adjuster is configured (never called: this app runs no workers), so score-input changes queue the AI step.
beforeAll(async () => {
  t = await initTestApp({ SCORE_ADJUSTER_URL: 'http://127.0.0.1:9/v1' });
  org = await newTestOrg(t);
});
afterAll(async () => t?.close());

/** The contact ids of every queued score adjustment, in queue order. */
async function queued(): Promise<string[]> {
  const rows = await t.sql<{ data: { contactIds: string[] } }>('select data from pgboss.job where name = ? order by created_on, id', [
    ADJUST_SCORE_QUEUE,
  ]);
  return rows.flatMap((r) => r.data.contactIds);
}

it('queues the AI score adjustment when an application write changes score inputs, and only then', async () => {
  const c = await org.session.contacts.create.mutate({ email: 'ai@example.com' });
  expect(await queued()).toEqual([c.id]);
  await org.session.contacts.update.mutate({ id: c.id, jobTitle: 'CEO' });
  expect(await queued()).toEqual([c.id, c.id]);
  await org.session.contacts.addTags.mutate({ id: c.id, tags: ['x'] });
  await org.session.contacts.setStage.mutate({ id: c.id, stage: 'customer' });
  await org.session.contacts.update.mutate({ id: c.id, custom: { a: 1 } });
  expect(await queued()).toHaveLength(2);
  const d = await org.session.contacts.create.mutate({ firstName: 'Dup', phone: '+1 555' });
  await org.session.contacts.merge.mutate({ primaryId: c.id, secondaryIds: [d.id] });
  expect(await queued()).toEqual([c.id, c.id, d.id, c.id]);
});
