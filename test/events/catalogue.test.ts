import { ADJUST_SCORE_QUEUE } from '#core/contacts/shared/adjust-score-job.ts';
import { EVENT_CATALOGUE, exampleFor, PING_MESSAGE } from '#core/events/catalogue.ts';
import { EVENT_NAMES, type EventName } from '#core/events/names.ts';
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { answer, startOpenAiStub, type OpenAiStub } from '#core/scoring/openai-stub.test-support.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { runQueuedJobs } from '../support/jobs.ts';
import { newTestOrg, rest } from '../internal/contacts-support.ts';

/** The spec's "Event names" table, copied here rather than read from names.ts, so that both are checked against it. */
const SPEC_TABLE: Record<string, string[]> = {
  Contacts: [
    'contact.created',
    'contact.updated',
    'contact.deleted',
    'contact.stage_changed',
    'contact.score_changed',
    'contact.tag_added',
    // Issue 30's consent event beside the spec's six.
    'contact.consent_changed',
  ],
  Deals: ['deal.created', 'deal.updated', 'deal.won', 'deal.lost', 'deal.stage_changed'],
  Messages: ['message.sent', 'message.received', 'conversation.created'],
  Tasks: ['task.created', 'task.completed'],
  Bookings: ['booking.created', 'booking.cancelled'],
  Forms: ['form.submitted'],
  'AI actions': ['ai_action.created', 'ai_action.approved', 'ai_action.rejected'],
  // Issue 30's custom website events beside the spec's three.
  Tracking: ['tracking.email_opened', 'tracking.link_clicked', 'tracking.page_visited', 'tracking.custom_event'],
  Nonprofit: ['nonprofit.verification_recorded', 'nonprofit.activated'],
  Test: ['ping'],
  // Issue 19's operational events, beside the spec's table.
  Webhooks: ['webhook.endpoint_disabled', 'webhook.endpoint_enabled', 'webhook.delivery_failed', 'webhook.limit_reached'],
};
const SPEC_SOURCES = ['app', 'api', 'zapier', 'import', 'sync', 'automation', 'ai', 'inbound', 'system', 'partner'];
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/**
 * Events whose emitters belong to later features (form intake, tracking) or to the delivery engine (ping, and the
 * operational `webhook.*` events: test/webhooks/delivery/operational.test.ts).
 */
const NOT_EMITTED_HERE = [
  'form.submitted',
  'contact.consent_changed',
  'tracking.email_opened',
  'tracking.link_clicked',
  'tracking.page_visited',
  'tracking.custom_event',
  'ping',
  'webhook.endpoint_disabled',
  'webhook.endpoint_enabled',
  'webhook.delivery_failed',
  'webhook.limit_reached',
];

/**
 * A payload matches its definition when its schema accepts it AND gives back exactly what went in: zod objects drop
 * keys they do not know, so a field the code sends but the catalogue does not describe shows up as a difference.
 */
function expectDescribed(payload: { event: string }) {
  const def = EVENT_CATALOGUE[payload.event as EventName];
  expect(def, `no definition for ${payload.event}`).toBeDefined();
  const parsed = def.payload.safeParse(payload);
  expect(parsed.error?.issues ?? [], `${payload.event}: ${JSON.stringify(payload)}`).toEqual([]);
  expect(parsed.data, `${payload.event} carries fields the catalogue does not describe`).toEqual(payload);
}

function expectShape(p: Record<string, unknown>) {
  expect(p.timestamp, p.event as string).toMatch(TIMESTAMP);
  expect(p.id, p.event as string).toMatch(UUID);
  if (p.event === 'ping') {
    expect(Object.keys(p).sort()).toEqual(['data', 'event', 'id', 'timestamp']);
  } else {
    expect(Object.keys(p).sort()).toEqual(['data', 'event', 'id', 'source', 'timestamp']);
    expect(SPEC_SOURCES).toContain(p.source);
  }
}

describe('the catalogue', () => {
  it('defines every event of the spec, in its group, with a label and a description, and nothing else', () => {
    const spec = Object.values(SPEC_TABLE).flat();
    expect([...EVENT_NAMES].sort()).toEqual([...spec].sort());
    expect(Object.keys(EVENT_CATALOGUE).sort()).toEqual([...spec].sort());
    for (const [group, names] of Object.entries(SPEC_TABLE)) {
      for (const name of names) {
        const def = EVENT_CATALOGUE[name as EventName];
        expect(def).toMatchObject({ name, group });
        expect(def.label, name).toMatch(/^[A-Z][^.]{3,40}$/);
        expect(def.description.length, name).toBeGreaterThan(20);
      }
    }
    expect(EVENT_CATALOGUE['contact.created'].label).toBe('Contact created');
  });

  it('gives each event an example payload of the spec shape that its own schemas accept', () => {
    for (const name of EVENT_NAMES) {
      const ex = exampleFor(name);
      expect(ex.event).toBe(name);
      expectShape(ex as unknown as Record<string, unknown>);
      expect(EVENT_CATALOGUE[name].data.safeParse(ex.data).success, name).toBe(true);
      expectDescribed(ex);
      if (name.startsWith('contact.')) {
        expect(ex.data.contact, name).toMatchObject({ id: expect.any(String), firstName: expect.any(String), email: expect.any(String) });
      }
    }
    expect(exampleFor('ping')).toEqual({
      id: expect.stringMatching(UUID),
      event: 'ping',
      timestamp: expect.stringMatching(TIMESTAMP),
      data: { message: PING_MESSAGE },
    });
  });

  it('gives each example a fixed id of its own, the same on every build', () => {
    const ids = EVENT_NAMES.map((name) => exampleFor(name).id);
    expect(new Set(ids).size).toBe(EVENT_NAMES.length);
    // Spelled out: a document regenerated tomorrow shows the same example id.
    expect(exampleFor('contact.created').id).toBe('d3fe1bec-fc0f-49e5-88df-be04dc801200');
    expect(EVENT_CATALOGUE['contact.created'].payload.safeParse({ ...exampleFor('contact.created'), id: 'not-a-uuid' }).success).toBe(
      false,
    );
    const { id: _id, ...withoutId } = exampleFor('contact.created');
    expect(EVENT_CATALOGUE['contact.created'].payload.safeParse(withoutId).success).toBe(false);
  });

  it('hands out copies of the examples', () => {
    const ex = exampleFor('deal.won');
    (ex.data as { deal: { title: string } }).deal.title = 'changed';
    expect((exampleFor('deal.won').data as { deal: { title: string } }).deal.title).not.toBe('changed');
  });

  it('refuses payloads that break the shape', () => {
    const refused = (p: unknown) => EVENT_CATALOGUE[(p as { event: EventName }).event].payload.safeParse(p).success;
    const contact = exampleFor('contact.created');
    expect(refused({ ...contact, timestamp: '2026-11-22T14:03:07Z' })).toBe(false);
    expect(refused({ ...contact, timestamp: '2026-11-22T14:03:07.123+01:00' })).toBe(false);
    expect(refused({ ...contact, source: 'webinar' })).toBe(false);
    expect(refused({ ...contact, extra: 1 })).toBe(false);
    const { source: _source, ...sourceless } = contact;
    expect(refused(sourceless)).toBe(false);
    const { email: _email, ...noEmail } = contact.data.contact as Record<string, unknown>;
    expect(refused({ ...contact, data: { contact: noEmail } })).toBe(false);
    expect(refused({ ...contact, event: 'contact.updated', data: {} })).toBe(false);
    expect(refused({ ...exampleFor('ping'), source: 'app' })).toBe(false);
    expect(refused({ ...exampleFor('ping'), data: {} })).toBe(false);
    expect(EVENT_CATALOGUE['contact.created'].payload.safeParse({ ...exampleFor('contact.updated') }).success).toBe(false);
  });
});

describe('real emissions match the catalogue', () => {
  let t: TestApp;
  let stub: OpenAiStub;
  const SECRET = 'provider-shared-secret-for-tests';

  beforeAll(async () => {
    stub = await startOpenAiStub();
    stub.handler = answer(7);
    t = await initTestApp({ SCORE_ADJUSTER_URL: stub.baseUrl, SCORE_ADJUSTER_API_KEY: 'sk-test-adjuster', SMS_INBOUND_SECRET: SECRET });
  });
  afterAll(async () => {
    await t?.close();
    await stub?.close();
  });

  it('for every event the application and /v1 emit, each with the source of its actor', async () => {
    const a = await newTestOrg(t);
    const app = async (path: string, body: unknown = {}) => {
      const r = await rest(t, 'POST', path, a.ownerKey, body);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBeLessThan(300);
      return r.body;
    };
    const v1 = async (path: string, body: unknown) => {
      const r = await call(t, 'POST', path, { key: a.publicKey, body });
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBeLessThan(300);
      return r.body;
    };

    // /v1: created, then updated with a new tag and a phone (tag_added, score_changed), a batch and a lead with a score.
    const ada = await v1('/contacts/upsert', { email: 'ada@example.com', firstName: 'Ada', tags: ['webinar'] });
    await v1('/contacts/upsert', { email: 'ada@example.com', phone: '+44 20 7946 0018', tags: ['VIP'] });
    await v1('/contacts/batch-upsert', { contacts: [{ email: 'ada@example.com', tags: ['batch'] }, { email: 'bob@example.com' }] });
    // The AI step runs before the lead's manual score, which would otherwise hide its adjustment.
    const [adjuster] = jobDefinitions(t.runtime.deps).filter((d) => d.queue === ADJUST_SCORE_QUEUE);
    expect(await runQueuedJobs(t, adjuster!)).not.toEqual([]);
    await v1('/leads', { email: 'ada@example.com', score: 90 });

    // The application.
    const c = await app('/contacts', { firstName: 'Grace', email: 'grace@example.com', tags: ['a'] });
    await app(`/contacts/${c.id}/update`, { jobTitle: 'Admiral' });
    await app(`/contacts/${c.id}/tags/add`, { tags: ['b'] });
    await app(`/contacts/${c.id}/stage`, { stage: 'customer' });
    await app(`/contacts/${c.id}/score`, { score: 12 });
    const dup = await app('/contacts', { firstName: 'Grace', tags: ['from-dup'] });
    await app('/contacts/merge', { primaryId: c.id, secondaryIds: [dup.id] });
    await app(`/contacts/${ada.id}/delete`);
    await app(`/contacts/${ada.id}/restore`);

    const stages = await t.sql<{ id: string }>(
      'select s.id from pipeline_stages s join pipelines p on p.id = s.pipeline_id where p.organization_id = ? and p.is_default order by s.position',
      [a.orgId],
    );
    const won = await app('/deals', { contactId: c.id, title: 'Fleet', valueCents: 100 });
    await app(`/deals/${won.id}/update`, { title: 'Fleet renewal', stageId: stages[1]!.id });
    await app(`/deals/${won.id}/update`, { status: 'won' });
    const lost = await app('/deals', { contactId: c.id, title: 'Side deal' });
    await app(`/deals/${lost.id}/update`, { status: 'lost' });

    const task = await app('/tasks', { title: 'Call Grace', contactId: c.id });
    await app(`/tasks/${task.id}/complete`);
    const booking = await app('/bookings', { contactId: c.id, startsAt: '2026-12-01T09:00:00Z', endsAt: '2026-12-01T09:30:00Z' });
    await app(`/bookings/${booking.id}/cancel`);
    const ok = await app('/ai-actions', { contactId: c.id, kind: 'follow_up', summary: 'Call her' });
    await app(`/ai-actions/${ok.id}/approve`);
    const no = await app('/ai-actions', { contactId: c.id, kind: 'follow_up', summary: 'Email her' });
    await app(`/ai-actions/${no.id}/reject`, { reason: 'done already' });
    await app('/nonprofit/verifications', { status: 'verified', registrationNumber: 'CH-1' });

    await t.sql(`update contacts set phone = '+15005550100', sms_consent = true where id = ?`, [c.id]);
    await app('/messages/send', { contactId: c.id, body: 'Hello Grace' });
    const inbound = await fetch(`${t.origin}/api/messages/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-provider-secret': SECRET },
      body: JSON.stringify({ orgId: a.orgId, from: '+15005550100', to: '+15550000000', body: 'Hi!', providerMessageId: 'p-1' }),
    });
    expect(inbound.status).toBe(200);

    const rows = await t.sql<{ id: string; event: string; payload: any; created_at: string }>(
      'select id, event, payload, created_at from outbox_events where organization_id = ? order by created_at, ctid',
      [a.orgId],
    );
    for (const r of rows) {
      expect(r.payload.event).toBe(r.event);
      // The payload's id is its outbox row's: the id deliveries, the feed and listen streams carry.
      expect(r.payload.id).toBe(r.id);
      expectShape(r.payload);
      expectDescribed(r.payload);
      expect(new Date(r.payload.timestamp).getTime()).toBe(new Date(r.created_at).getTime());
    }
    const emitted = new Set(rows.map((r) => r.event));
    expect([...emitted].sort()).toEqual(EVENT_NAMES.filter((n) => !NOT_EMITTED_HERE.includes(n)).sort());

    // Who made each change: /v1 is `api`, the application `app`, the AI step `ai`, an inbound text `inbound`.
    const sources = (pred: (p: any) => boolean) => new Set(rows.filter((r) => pred(r.payload)).map((r) => r.payload.source));
    const about = (id: string) => (p: any) => p.data.contact?.id === id;
    expect(
      sources((p) => about(ada.id)(p) && p.event !== 'contact.deleted' && !p.data.restored && p.event !== 'contact.score_changed'),
    ).toEqual(new Set(['api']));
    expect(sources((p) => about(ada.id)(p) && p.event === 'contact.score_changed')).toEqual(new Set(['api', 'ai']));
    expect(sources((p) => about(c.id)(p) && p.event.startsWith('contact.'))).toEqual(new Set(['app']));
    expect(sources((p) => /^(deal|task|booking|nonprofit)\.|^ai_action\.(approved|rejected)/.test(p.event))).toEqual(new Set(['app']));
    expect(sources((p) => p.event === 'ai_action.created')).toEqual(new Set(['ai']));
    expect(sources((p) => p.event === 'message.received')).toEqual(new Set(['inbound']));
  });
});
