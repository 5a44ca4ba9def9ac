/**
 * Automation-platform triggers (spec "Automation-platform hooks"): the list of the spec's triggers with the event
 * catalogue's label, description and example (marked as one), and each trigger's samples: the organization's own
 * latest payloads, each with the event's id, or none.
 */
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { automation } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

/** True when the catalogue's schema of that event (which requires the event's `id`) accepts the payload. */
const valid = (payload: { event: string }) =>
  EVENT_CATALOGUE[payload.event as keyof typeof EVENT_CATALOGUE].payload.safeParse(payload).success;

/** Spelled out from the spec, not imported, so that a change to the code's list is caught here. */
const SPEC_TRIGGERS = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.stage_changed',
  'contact.tag_added',
  'deal.created',
  'deal.updated',
  'deal.won',
  'deal.lost',
  'deal.stage_changed',
  'task.created',
  'task.completed',
  'message.received',
  'form.submitted',
  'booking.created',
];

describe('trigger list', () => {
  it("lists exactly the spec's 15 triggers with the catalogue's label, description and example, marked as one", async () => {
    const org = await t.newOrg();
    const res = await automation(t, 'GET', '/triggers', { apiKey: org.internalKey });
    expect(res.status).toBe(200);
    expect(res.body.map((tr: { key: string }) => tr.key)).toEqual(SPEC_TRIGGERS);
    const base = t.runtime.deps.config.BASE_URL;
    for (const trigger of res.body) {
      const def = EVENT_CATALOGUE[trigger.key as keyof typeof EVENT_CATALOGUE];
      expect(trigger).toEqual({
        key: trigger.key,
        label: def.label,
        description: def.description,
        sample: def.example,
        sampleIsExample: true,
        samplesUrl: `${base}/integrations/automation/triggers/${trigger.key}/samples`,
        pollUrl: `${base}/integrations/automation/triggers/${trigger.key}/poll?limit=100`,
      });
      expect(Object.keys(trigger.sample)[0]).toBe('id');
      expect(trigger.sample.event).toBe(trigger.key);
      expect(valid(trigger.sample), trigger.key).toBe(true);
    }
    // The example's id is no event of the organization, and its contact is no contact of it.
    const example = res.body[0].sample;
    expect(await t.sql(`select 1 from outbox_events where id = ?`, [example.id])).toEqual([]);
    const contact = await fetch(`${t.origin}/api/contacts/${example.data.contact.id}`, { headers: { 'x-api-key': org.internalKey } });
    expect(contact.status).toBe(404);
    expect((await automation(t, 'GET', '/triggers', { apiKey: org.publicKey })).body.code).toBe('wrong_api_surface');
  });
});

describe('trigger samples', () => {
  it("returns the organization's 3 latest payloads of the event, newest first, exactly as stored, each with its event's id first", async () => {
    const org = await t.newOrg();
    for (const name of ['Ada', 'Grace', 'Edith', 'Hedy']) {
      t.clock.advance(1000);
      const res = await call(t, 'POST', '/contacts/upsert', {
        key: org.publicKey,
        body: { email: `${name.toLowerCase()}@example.com`, firstName: name },
      });
      expect(res.status).toBe(200);
    }
    const stored = await t.sql<{ id: string; payload: Record<string, unknown> }>(
      `select id, payload from outbox_events where organization_id = ? and event = 'contact.created' order by created_at desc limit 3`,
      [org.orgId],
    );
    const res = await automation(t, 'GET', '/triggers/contact.created/samples', { apiKey: org.internalKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(stored.map((r) => ({ ...r.payload, id: r.id })));
    for (const sample of res.body) expect(Object.keys(sample)[0]).toBe('id');
    expect(res.body.map((p: { data: { contact: { firstName: string } } }) => p.data.contact.firstName)).toEqual(['Hedy', 'Edith', 'Grace']);
    expect(res.body.every(valid)).toBe(true);
  });

  it("answers an empty list when the organization has no such event (no example whose contact 404s), never another organization's", async () => {
    const busy = await t.newOrg();
    const quiet = await t.newOrg();
    await call(t, 'POST', '/contacts/upsert', { key: busy.publicKey, body: { email: 'private@example.com', firstName: 'Secret' } });
    const res = await automation(t, 'GET', '/triggers/contact.created/samples', { apiKey: quiet.internalKey });
    expect(res).toMatchObject({ status: 200, body: [] });
    const deals = await automation(t, 'GET', '/triggers/deal.won/samples', { bearer: busy.internalKey });
    expect(deals).toMatchObject({ status: 200, body: [] });
  });

  it('answers 404 for an event that is not a trigger, and 401/403 without an Internal key', async () => {
    const org = await t.newOrg();
    for (const event of ['contact.score_changed', 'ping', 'nope', '%00']) {
      const res = await automation(t, 'GET', `/triggers/${event}/samples`, { apiKey: org.internalKey });
      expect(res.status, event).toBeGreaterThanOrEqual(400);
      expect(res.status, event).toBeLessThan(500);
    }
    const notTrigger = await automation(t, 'GET', '/triggers/contact.score_changed/samples', { apiKey: org.internalKey });
    expect(notTrigger).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await automation(t, 'GET', '/triggers/contact.created/samples', null)).status).toBe(401);
    expect((await automation(t, 'GET', '/triggers/contact.created/samples', { apiKey: org.publicKey })).status).toBe(403);
  });
});
