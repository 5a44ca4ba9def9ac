/**
 * Issue 30 (consent, custom events, delivery filters) meets issue 27's one-trip write path: a /v1 upsert is one
 * PL/pgSQL function call whose answer Fastify serializes from the output's JSON Schema. Each write here is held to one
 * round trip first, so what follows is about that path and not the TypeScript one beside it:
 * - the answers carry every field the served /v1 document promises for them, and the document promises no consent
 *   there (consent is read at `GET /v1/contacts/{id}/consents`);
 * - no API key sets consent through it, on a new contact or on one whose consent a form recorded;
 * - the events the function writes are dispatched through the endpoint's filter like any other: the filtered one is
 *   not sent, not counted toward the hour, and listed only when asked for.
 */
import { SKIP_FILTERED } from '#core/webhooks/delivery/policy.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitJson } from '../forms/support.ts';
import { newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { startEngine, waitForLog } from '../webhooks/delivery/support.ts';

type Json = any;
let t: TestApp;
let org: TestOrg;
let rx: Receiver;
let doc: Json;

beforeAll(async () => {
  rx = await startReceiver();
  rx.respond((_req, res) => void res.writeHead(200).end('ok'));
  // No delivery engine until a test starts it: the round trips counted are the request's own.
  t = await initTestApp({ WEBHOOKS_UNSAFE_ALLOW_LOOPBACK: 'true', WEBHOOK_PUMP_INTERVAL_MS: '20' });
  org = await newTestOrg(t);
  doc = await (await fetch(`${t.v1}/docs/json`)).json();
  // The key's first request looks it up once; the process knows it from then on.
  expect((await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: 'warm@one-trip.example' } })).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

let seq = 0;
const email = (label: string) => `${label}-${++seq}-${Date.now()}@one-trip.example`;

/** A /v1 write that must have taken the one-trip path: one round trip, no transaction begun by the server. */
async function oneTrip(path: string, body: unknown) {
  const before = { ...t.runtime.deps.db.traffic };
  const r = await call(t, 'POST', path, { key: org.publicKey, body });
  const after = t.runtime.deps.db.traffic;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect({ roundTrips: after.roundTrips - before.roundTrips, transactions: after.transactions - before.transactions }).toEqual({
    roundTrips: 1,
    transactions: 0,
  });
  return r;
}

/** The 200 answer's schema of an operation in the served /v1 document, its `$ref` followed. */
function answerSchema(method: string, path: string): Json {
  const s = doc.paths[path][method].responses['200'].content['application/json'].schema;
  return s.$ref
    ? s.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((n: Json, k: string) => n[k], doc)
    : s;
}

describe('the one-trip answers are what the /v1 document promises', () => {
  it.each([
    ['/contacts/upsert', () => ({ email: email('new'), firstName: 'Ada' })],
    ['/contacts/upsert', () => ({ email: 'warm@one-trip.example', tags: ['again'] })],
    ['/leads', () => ({ email: email('lead'), score: 40 })],
    ['/companies/upsert', () => ({ domain: `co${++seq}.one-trip.example`, name: 'Co' })],
  ])('POST %s answers every field of its schema and no other', async (path, body) => {
    const schema = answerSchema('post', path);
    const r = await oneTrip(path, body());
    expect(Object.keys(r.body).sort()).toEqual(Object.keys(schema.properties).sort());
    for (const field of schema.required ?? []) expect(r.body[field], field).not.toBeUndefined();
  });

  it('promises no consent on a contact write; the contact read and its own operation show it, read-only', () => {
    for (const [method, path] of [
      ['post', '/contacts/upsert'],
      ['post', '/contacts/batch-upsert'],
    ])
      expect(JSON.stringify(answerSchema(method!, path!)), `${method} ${path}`).not.toMatch(/consent/i);
    expect(answerSchema('get', '/contacts/{id}').properties.consent).toEqual({ $ref: '#/components/schemas/ContactConsent' });
    expect(doc.components.schemas.ContactConsent.description).toMatch(/^Read-only.*never through an API key/);
    expect(Object.keys(doc.paths['/contacts/{id}'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/contacts/{id}/consents'])).toEqual(['get']);
    expect(JSON.stringify(doc.components.schemas.ContactUpsertInput)).not.toMatch(/consent/i);
  });
});

describe('no API key sets consent through the one-trip path (spec: the API never sets consent)', () => {
  const attempt = { emailConsent: true, smsConsent: true, email_consent: true, consent: { email_marketing: true } };

  it('on a new contact: the consent fields are not the upsert’s, and nothing of consent is recorded', async () => {
    const address = email('fresh');
    const r = await oneTrip('/contacts/upsert', { email: address, ...attempt });
    const [row] = await t.sql<{ email_consent: boolean; sms_consent: boolean }>(
      'select email_consent, sms_consent from contacts where id = ?',
      [r.body.id],
    );
    expect(row).toEqual({ email_consent: false, sms_consent: false });
    expect(await t.sql('select id from consent_entries where contact_id = ?', [r.body.id])).toEqual([]);
  });

  it('on a contact whose consent a form recorded: neither withdrawn nor changed, no entry and no consent event', async () => {
    const form = await org.owner.forms.create.mutate({
      name: 'Newsletter',
      published: true,
      fields: [{ id: 'email', label: 'Email', type: 'email', required: true }],
      consent: { doubleOptIn: false, purposes: [{ purpose: 'email_marketing', text: 'Send me news.', version: '1', required: false }] },
    });
    const address = email('granted');
    expect((await submitJson(t, form.id, { email: address, _consent_email_marketing: true })).status).toBeLessThan(300);
    const [contact] = await t.sql<{ id: string }>('select id from contacts where organization_id = ? and email = ?', [org.orgId, address]);
    const recorded = await rest(t, 'GET', `/contacts/${contact!.id}/consents`, org.ownerKey);
    expect(recorded.body.purposes).toEqual([expect.objectContaining({ purpose: 'email_marketing', granted: true })]);

    const r = await oneTrip('/contacts/upsert', {
      email: address,
      firstName: 'Grace',
      emailConsent: false,
      consent: { email_marketing: false },
    });
    expect(r.body).toEqual({ id: contact!.id, created: false, matchedBy: 'email' });
    const [row] = await t.sql<{ email_consent: boolean; first_name: string }>(
      'select email_consent, first_name from contacts where id = ?',
      [contact!.id],
    );
    expect(row).toEqual({ email_consent: true, first_name: 'Grace' });
    const after = await call(t, 'GET', `/contacts/${contact!.id}/consents`, { key: org.publicKey });
    expect(after.body).toEqual(recorded.body);
    const changed = await t.sql(
      `select id from outbox_events where event = 'contact.consent_changed' and payload->'data'->'contact'->>'id' = ?`,
      [contact!.id],
    );
    expect(changed).toHaveLength(1); // the form's grant, and nothing since
  });
});

describe('delivery filters on the events the one-trip function writes', () => {
  it('send the matching event only; the other is filtered: not sent, not counted toward the hour, listed when asked', async () => {
    const created = await rest(t, 'POST', '/webhooks', org.ownerKey, {
      url: `${rx.origin}/one-trip`,
      events: ['contact.created'],
      filter: { $and: [{ 'contact.tags': 'vip' }, { 'contact.source': { $in: ['api', 'webinar'] } }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpointId = created.body.id as string;
    const plain = email('plain');
    const vip = email('vip');
    await oneTrip('/contacts/upsert', { email: plain });
    await oneTrip('/contacts/upsert', { email: vip, tags: ['vip'] });
    await oneTrip('/leads', { email: email('lead-plain'), score: 10 });

    await startEngine(t);
    const log = await waitForLog(t, endpointId, 3);
    expect(log.map((l) => l.outcome).sort()).toEqual(['filtered', 'filtered', 'succeeded']);
    expect(log.filter((l) => l.outcome === 'filtered').every((l) => l.error === SKIP_FILTERED)).toBe(true);
    const sent = rx.requests.filter((r) => r.url === '/one-trip').map((r) => JSON.parse(r.rawBody.toString('utf8')).data.contact.email);
    expect(sent).toEqual([vip]);
    const [counter] = await t.sql<{ count: number }>('select count from rate_limit_counters where bucket = ?', [`webhooks:${org.orgId}`]);
    expect(counter!.count).toBe(1);
    const shown = await rest(t, 'GET', `/webhooks/${endpointId}/deliveries`, org.ownerKey);
    expect(shown.body.items.map((i: { outcome: string }) => i.outcome)).toEqual(['succeeded']);
    const asked = await rest(t, 'GET', `/webhooks/${endpointId}/deliveries?outcome=filtered`, org.ownerKey);
    expect(asked.body.items).toHaveLength(2);
  });
});
