/**
 * Automation-platform actions (spec "Automation-platform hooks", Actions table): the list, and each action run over
 * real HTTP through the application's services, its changes emitted with source `zapier`; refusals name every
 * missing input and store nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { automation } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

type Org = Awaited<ReturnType<TestApp['newOrg']>>;
const run = (org: Org, action: string, body: unknown) => automation(t, 'POST', `/actions/${action}`, { apiKey: org.internalKey }, body);
const events = (orgId: string) =>
  t.sql<{ event: string; payload: { source?: string; data: Record<string, any> } }>(
    `select event, payload from outbox_events where organization_id = ? order by created_at, id`,
    [orgId],
  );
/** Every table an action writes, counted: a refusal must leave all of them as they were. */
const footprint = async (orgId: string) =>
  (
    await t.sql<Record<string, string>>(
      `select (select count(*) from contacts where organization_id = $1) as contacts, (select count(*) from deals where organization_id = $1) as deals,
        (select count(*) from tasks where organization_id = $1) as tasks, (select count(*) from messages where organization_id = $1) as messages,
        (select count(*) from outbox_events where organization_id = $1) as events, (select contact_count from contact_counters where organization_id = $1) as counter,
        (select string_agg(tags::text || coalesce(phone, ''), ',' order by id) from contacts where organization_id = $1) as contact_data`.replaceAll(
        '$1',
        '?',
      ),
      [orgId, orgId, orgId, orgId, orgId, orgId, orgId],
    )
  )[0];
const issuePaths = (body: { issues: { path: string }[] }) => body.issues.map((i) => i.path);

async function newContact(org: Org, fields: Record<string, unknown> = {}): Promise<string> {
  const res = await run(org, 'create_contact', { firstName: 'Ada', lastName: 'Lovelace', ...fields });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe('action list', () => {
  it("lists each action with its required and optional inputs as the spec's Actions table", async () => {
    const org = await t.newOrg();
    const res = await automation(t, 'GET', '/actions', { apiKey: org.internalKey });
    expect(res.status).toBe(200);
    expect(res.body.map((a: Record<string, unknown>) => [a.key, a.required, a.requiredAnyOf, a.optional])).toEqual([
      ['create_contact', ['firstName', 'lastName'], [], ['email', 'phone', 'company', 'source', 'tags']],
      // The spec identifies the contact by id or email and does not list what may change: the contact's own fields.
      ['update_contact', [], ['id', 'email'], ['firstName', 'lastName', 'phone', 'company']],
      ['create_deal', ['contactId', 'pipelineId'], [], []],
      ['create_task', ['title'], [], []],
      ['send_sms', ['to', 'body'], [], []],
      ['add_tag', ['contactId', 'tags'], [], []],
    ]);
    for (const action of res.body) {
      expect(action.label).toEqual(expect.any(String));
      expect(action.inputs.map((i: { key: string }) => i.key)).toEqual([...action.required, ...action.requiredAnyOf, ...action.optional]);
      for (const input of action.inputs) expect(input.required).toBe(action.required.includes(input.key));
    }
    expect(res.body[0].inputs.find((i: { key: string }) => i.key === 'tags')).toMatchObject({ list: true, required: false });
  });
});

describe('running actions', () => {
  it('create_contact creates the contact with its tags and company, emitting contact.created with source zapier', async () => {
    const org = await t.newOrg();
    expect(
      (await call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain: 'example.com', name: 'Example' } })).status,
    ).toBe(200);
    const res = await run(org, 'create_contact', {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'Ada@Example.com',
      phone: '+1 415 555 0123',
      company: 'https://www.example.com/about',
      tags: 'vip, webinar,,',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      tags: ['vip', 'webinar'],
      source: 'zapier',
    });
    const [row] = await t.sql<{ company_id: string; domain: string }>(
      `select c.company_id, co.domain from contacts c join companies co on co.id = c.company_id where c.id = ?`,
      [res.body.id],
    );
    expect(row!.domain).toBe('example.com');
    const evs = await events(org.orgId);
    expect(evs.map((e) => [e.event, e.payload.source, e.payload.data.contact.id])).toEqual([['contact.created', 'zapier', res.body.id]]);
    // Blank optional inputs (what a platform sends for unmapped fields) are simply not given.
    const blanks = await run(org, 'create_contact', {
      firstName: 'Grace',
      lastName: 'Hopper',
      email: '',
      phone: null,
      company: '',
      source: 'webinar-2026',
      tags: '',
    });
    expect(blanks.status).toBe(201);
    expect(blanks.body).toMatchObject({ email: null, phone: null, tags: [], source: 'webinar-2026' });
  });

  it('create_contact names every missing input and refuses unknown companies and taken emails, storing nothing', async () => {
    const org = await t.newOrg();
    await newContact(org, { email: 'taken@example.com' });
    const before = await footprint(org.orgId);
    const missing = await run(org, 'create_contact', { email: 'grace@example.com' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 'validation_failed',
      error: 'Validation failed: firstName is required; lastName is required',
    });
    expect(issuePaths(missing.body)).toEqual(['firstName', 'lastName']);
    const blank = await run(org, 'create_contact', { firstName: '  ', lastName: null, email: 'nope', tags: 7 });
    expect(issuePaths(blank.body)).toEqual(['firstName', 'lastName', 'email', 'tags']);
    const company = await run(org, 'create_contact', { firstName: 'A', lastName: 'B', company: 'unknown.example' });
    // The Internal key that runs actions cannot call /v1: the error names the route it can create the company with.
    expect(company).toMatchObject({
      status: 422,
      body: { code: 'company_not_found', error: 'No company with domain unknown.example; create it first with POST /api/companies' },
    });
    const notADomain = await run(org, 'create_contact', { firstName: 'A', lastName: 'B', company: 'Acme Inc' });
    expect(notADomain).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'company' }] } });
    const taken = await run(org, 'create_contact', { firstName: 'A', lastName: 'B', email: 'TAKEN@example.com', tags: ['x'] });
    expect(taken).toMatchObject({ status: 409, body: { code: 'email_exists' } });
    expect(await footprint(org.orgId)).toEqual(before);
  });

  it('update_contact finds the contact by email, or by id with email as the new value, emitting contact.updated (zapier)', async () => {
    const org = await t.newOrg();
    const id = await newContact(org, { email: 'ada@example.com' });
    const byEmail = await run(org, 'update_contact', { email: 'ADA@example.com', phone: '+1 415 555 0199', firstName: '' });
    expect(byEmail).toMatchObject({ status: 200, body: { id, phone: '+1 415 555 0199', firstName: 'Ada' } });
    const byId = await run(org, 'update_contact', { id, email: 'ada@lovelace.example', lastName: 'King' });
    expect(byId).toMatchObject({ status: 200, body: { id, email: 'ada@lovelace.example', lastName: 'King' } });
    const updates = (await events(org.orgId)).filter((e) => e.event === 'contact.updated');
    expect(updates.map((e) => [e.payload.source, e.payload.data.contact.email])).toEqual([
      ['zapier', 'ada@example.com'],
      ['zapier', 'ada@lovelace.example'],
    ]);
  });

  it('update_contact without id or email, or for an unknown one, is refused and changes nothing', async () => {
    const org = await t.newOrg();
    await newContact(org, { email: 'ada@example.com' });
    const before = await footprint(org.orgId);
    const neither = await run(org, 'update_contact', { firstName: 'X', phone: 5 });
    expect(neither.status).toBe(400);
    expect(issuePaths(neither.body)).toEqual(['phone', 'id']);
    expect(neither.body.error).toMatch(/id or email is required/);
    expect((await run(org, 'update_contact', { email: 'nobody@example.com', phone: '1' })).status).toBe(404);
    expect((await run(org, 'update_contact', { id: crypto.randomUUID(), phone: '1' })).status).toBe(404);
    const stranger = await t.newOrg();
    expect((await run(stranger, 'update_contact', { email: 'ada@example.com', phone: '1' })).status).toBe(404);
    expect(await footprint(org.orgId)).toEqual(before);
  });

  it('create_deal opens a deal named after the contact on the first stage, emitting deal.created (zapier)', async () => {
    const org = await t.newOrg();
    const contactId = await newContact(org);
    const [pipeline] = await t.sql<{ id: string; stage: string }>(
      `select p.id, (select s.id from pipeline_stages s where s.pipeline_id = p.id order by position limit 1) as stage from pipelines p where p.organization_id = ?`,
      [org.orgId],
    );
    const res = await run(org, 'create_deal', { contactId, pipelineId: pipeline!.id });
    expect(res).toMatchObject({
      status: 201,
      body: { contactId, pipelineId: pipeline!.id, stageId: pipeline!.stage, title: 'Ada Lovelace', status: 'open' },
    });
    const created = (await events(org.orgId)).filter((e) => e.event === 'deal.created');
    expect(created.map((e) => [e.payload.source, e.payload.data.deal.id])).toEqual([['zapier', res.body.id]]);
  });

  it('create_deal names both missing inputs and refuses foreign records, storing nothing', async () => {
    const org = await t.newOrg();
    const stranger = await t.newOrg();
    const contactId = await newContact(org);
    const [foreign] = await t.sql<{ id: string }>(`select id from pipelines where organization_id = ?`, [stranger.orgId]);
    const before = await footprint(org.orgId);
    const missing = await run(org, 'create_deal', {});
    expect(missing.body).toMatchObject({
      code: 'validation_failed',
      error: 'Validation failed: contactId is required; pipelineId is required',
    });
    expect(issuePaths((await run(org, 'create_deal', { contactId: 'x', pipelineId: '' })).body)).toEqual(['contactId', 'pipelineId']);
    expect((await run(org, 'create_deal', { contactId, pipelineId: foreign!.id })).status).toBe(404);
    expect(await footprint(org.orgId)).toEqual(before);
  });

  it('create_task creates an unassigned task, emitting task.created (zapier); a missing title is named', async () => {
    const org = await t.newOrg();
    const res = await run(org, 'create_task', { title: 'Call Ada' });
    expect(res).toMatchObject({ status: 201, body: { title: 'Call Ada', assigneeId: null, contactId: null } });
    expect((await events(org.orgId)).map((e) => [e.event, e.payload.source])).toEqual([['task.created', 'zapier']]);
    const before = await footprint(org.orgId);
    const missing = await run(org, 'create_task', { title: '' });
    expect(missing).toMatchObject({ status: 400, body: { code: 'validation_failed', error: 'Validation failed: title is required' } });
    expect(await footprint(org.orgId)).toEqual(before);
  });

  it('send_sms texts a consenting contact found by id or phone number, emitting message.sent (zapier)', async () => {
    const org = await t.newOrg();
    const contactId = await newContact(org, { phone: '+1 (415) 555-0123' });
    await t.sql(`update contacts set sms_consent = true where id = ?`, [contactId]);
    const byNumber = await run(org, 'send_sms', { to: '+14155550123', body: 'Hi Ada' });
    expect(byNumber).toMatchObject({
      status: 201,
      body: { contactId, to: '+1 (415) 555-0123', body: 'Hi Ada', status: 'sent', direction: 'outbound' },
    });
    const byId = await run(org, 'send_sms', { to: contactId, body: 'Again' });
    expect(byId).toMatchObject({ status: 201, body: { contactId, status: 'sent' } });
    const sms = (await events(org.orgId)).filter((e) => e.event.startsWith('message.') || e.event.startsWith('conversation.'));
    expect(sms.map((e) => [e.event, e.payload.source])).toEqual([
      ['conversation.created', 'zapier'],
      ['message.sent', 'zapier'],
      ['message.sent', 'zapier'],
    ]);
  });

  it('send_sms is refused without SMS consent (409 sms_consent_required), for unknown numbers and missing inputs, sending nothing', async () => {
    const org = await t.newOrg();
    const contactId = await newContact(org, { phone: '+1 415 555 0177' });
    const before = await footprint(org.orgId);
    for (const to of [contactId, '+14155550177']) {
      const res = await run(org, 'send_sms', { to, body: 'Hi' });
      expect(res).toMatchObject({ status: 409, body: { code: 'sms_consent_required' } });
    }
    expect((await run(org, 'send_sms', { to: '+1 999 000 0000', body: 'Hi' })).status).toBe(404);
    expect((await run(org, 'send_sms', { to: 'no digits', body: 'Hi' })).body).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'to' }],
    });
    const missing = await run(org, 'send_sms', {});
    expect(missing.body).toMatchObject({ code: 'validation_failed', error: 'Validation failed: to is required; body is required' });
    expect(await footprint(org.orgId)).toEqual(before);
  });

  it('add_tag adds tags, one contact.tag_added (zapier) per new tag; missing inputs are named', async () => {
    const org = await t.newOrg();
    const contactId = await newContact(org, { tags: ['vip'] });
    const res = await run(org, 'add_tag', { contactId, tags: 'VIP, webinar, partner' });
    expect(res).toMatchObject({ status: 200, body: { tags: ['vip', 'webinar', 'partner'] } });
    const added = (await events(org.orgId)).filter((e) => e.event === 'contact.tag_added');
    // One write stamps its events with one instant, so their order is not the tags' order.
    expect(added.map((e) => [e.payload.source, e.payload.data.tag]).sort()).toEqual([
      ['zapier', 'partner'],
      ['zapier', 'webinar'],
    ]);
    const before = await footprint(org.orgId);
    const missing = await run(org, 'add_tag', { tags: [] });
    expect(missing.body).toMatchObject({ code: 'validation_failed', error: 'Validation failed: contactId is required; tags is required' });
    expect((await run(org, 'add_tag', { contactId: crypto.randomUUID(), tags: ['x'] })).status).toBe(404);
    expect(await footprint(org.orgId)).toEqual(before);
  });

  it('answers 404 for an unknown action, and refuses Public keys and missing keys before reading the inputs', async () => {
    const org = await t.newOrg();
    const unknown = await run(org, 'delete_everything', {});
    expect(unknown).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await automation(t, 'POST', '/actions/create_task', { apiKey: org.publicKey }, {})).body.code).toBe('wrong_api_surface');
    expect((await automation(t, 'POST', '/actions/create_task', null, { title: 'x' })).status).toBe(401);
    expect(await footprint(org.orgId)).toMatchObject({ tasks: '0' });
  });
});
