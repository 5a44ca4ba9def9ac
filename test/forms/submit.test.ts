import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { eventsOf, newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { formEvents, newForm, submissions, submitJson, submitUrlencoded } from './support.ts';

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ APP_URL: 'https://app.leadwire.test' });
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const good = { email: 'Ada@Example.com', first_name: 'Ada', lastName: 'Lovelace', topic: 'demo', consent: true, message: 'Call me' };
const contactsWith = (email: string) =>
  t.sql<{ id: string; source: string; lead_score: number; first_name: string | null }>(
    `select id, source, lead_score, first_name from contacts where organization_id = ? and email = ?`,
    [a.orgId, email],
  );
const defaultPipeline = async (orgId: string) =>
  (
    await t.sql<{ id: string; stage: string }>(
      `select p.id, (select s.id from pipeline_stages s where s.pipeline_id = p.id order by s.position limit 1) as stage
     from pipelines p where p.organization_id = ? and p.is_default`,
      [orgId],
    )
  )[0]!;

describe('POST /api/forms/<id>/submit with JSON', () => {
  it('creates the contact (source form, +10), stores the submission, places it on the default pipeline and emits form.submitted', async () => {
    const form = await newForm(a.member);
    const r = await submitJson(t, form.id, {
      ...good,
      utm_source: 'newsletter',
      UTM_Campaign: 'spring',
      _referrer: 'https://www.google.com/',
      _landingPage: 'https://www.example.com/contact?x=1',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ ok: true, message: 'Thank you! Your answers have been received.' });

    const [contact] = await contactsWith('ada@example.com');
    // email 15 + form source 10
    expect(contact).toMatchObject({ source: 'form', lead_score: 25, first_name: 'Ada' });
    const [sub] = await submissions(t, form.id);
    expect(sub).toMatchObject({
      contact_id: contact!.id,
      answers: { email: 'ada@example.com', first_name: 'Ada', lastName: 'Lovelace', topic: 'Demo', consent: true, message: 'Call me' },
      attribution: {
        utm: { source: 'newsletter', campaign: 'spring' },
        referrer: 'https://www.google.com/',
        landingPage: 'https://www.example.com/contact?x=1',
      },
    });
    const pipeline = await defaultPipeline(a.orgId);
    const items = await t.sql<{ id: string; pipeline_id: string; stage_id: string }>(
      `select id, pipeline_id, stage_id from pipeline_items where contact_id = ?`,
      [contact!.id],
    );
    expect(items).toEqual([{ id: sub!.pipeline_item_id, pipeline_id: pipeline.id, stage_id: pipeline.stage }]);

    const [event] = await formEvents(t, a.orgId);
    expect(event!.payload).toEqual({
      id: expect.any(String),
      event: 'form.submitted',
      timestamp: expect.any(String),
      source: 'inbound',
      data: {
        form: { id: form.id, name: 'Contact us' },
        submission: { id: sub!.id, fields: sub!.answers, pageUrl: 'https://www.example.com/contact?x=1', attribution: sub!.attribution },
        contact: { id: contact!.id, firstName: 'Ada', email: 'ada@example.com' },
      },
    });
    // The catalogue describes exactly what is emitted: parsing gives back the same payload, no key dropped.
    const parsed = EVENT_CATALOGUE['form.submitted'].payload.safeParse(event!.payload);
    expect(parsed.error?.issues ?? []).toEqual([]);
    expect(parsed.data).toEqual(event!.payload);
    expect((await eventsOf(t, a.orgId, contact!.id)).map((e) => [e.event, e.source])).toEqual([
      ['contact.created', 'inbound'],
      ['form.submitted', 'inbound'],
    ]);

    // On the contact's timeline, with its answers and attribution.
    const timeline = await a.owner.contacts.timeline.query({ id: contact!.id, limit: 50 });
    expect(timeline.items).toContainEqual(
      expect.objectContaining({
        kind: 'form_submission',
        id: sub!.id,
        formId: form.id,
        formName: 'Contact us',
        answers: sub!.answers,
        attribution: sub!.attribution,
      }),
    );
  });

  it('matches an existing contact by email: same contact, its source kept, named fields updated, no second placement', async () => {
    const existing = await call(t, 'POST', '/contacts/upsert', { key: a.publicKey, body: { email: 'grace@example.com', firstName: 'G' } });
    const form = await newForm(a.member);
    expect((await submitJson(t, form.id, { ...good, email: 'GRACE@example.com', first_name: 'Grace' })).status).toBe(200);
    expect((await submitJson(t, form.id, { ...good, email: 'grace@example.com', first_name: 'Grace' })).status).toBe(200);
    expect(await contactsWith('grace@example.com')).toEqual([{ id: existing.body.id, source: 'api', lead_score: 15, first_name: 'Grace' }]);
    const subs = await submissions(t, form.id);
    expect(subs.map((s) => s.contact_id)).toEqual([existing.body.id, existing.body.id]);
    expect(subs[0]!.pipeline_item_id).toBe(subs[1]!.pipeline_item_id);
    expect(await t.sql(`select 1 from pipeline_items where contact_id = ?`, [existing.body.id])).toHaveLength(1);
  });

  it("attaches the browser's earlier anonymous page views when the submission carries its visitor id (_visitor)", async () => {
    const form = await newForm(a.member);
    const visitor = 'vis_form_attach_0001';
    const view = await fetch(`${t.origin}/api/track/pageview`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ org: a.orgId, url: 'https://www.example.com/pricing', visitor }),
    });
    expect(view.status).toBe(202);
    const r = await submitJson(t, form.id, { ...good, email: 'visitor@example.com', _visitor: visitor });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [contact] = await contactsWith('visitor@example.com');
    expect(await t.sql('select url from page_views where organization_id = ? and contact_id = ?', [a.orgId, contact!.id])).toEqual([
      { url: 'https://www.example.com/pricing' },
    ]);
    // A value that is not a visitor id is ignored, never a reason to lose the lead.
    expect((await submitJson(t, form.id, { ...good, email: 'visitor2@example.com', _visitor: 'x' })).status).toBe(200);
  });

  it('accepts labels as keys, in any case, and ids in any case', async () => {
    const form = await newForm(a.member);
    const r = await submitJson(t, form.id, {
      'EMAIL ADDRESS': 'label@example.com',
      'first name': 'Lab',
      TOPIC: 'Pricing',
      'I agree to be contacted': 'on',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await submissions(t, form.id))[0]!.answers).toEqual({
      email: 'label@example.com',
      first_name: 'Lab',
      topic: 'Pricing',
      consent: true,
    });
  });

  it('places submissions on the form pipeline when it names one', async () => {
    const pipeline = await a.owner.pipelines.create.mutate({ name: `Inbound ${Date.now()}`, stages: ['New', 'Qualified'] });
    const form = await newForm(a.member, { pipelineId: pipeline.id });
    expect((await submitJson(t, form.id, { ...good, email: 'routed@example.com' })).status).toBe(200);
    const [contact] = await contactsWith('routed@example.com');
    expect(await t.sql(`select pipeline_id, stage_id from pipeline_items where contact_id = ?`, [contact!.id])).toEqual([
      { pipeline_id: pipeline.id, stage_id: pipeline.stages[0]!.id },
    ]);
  });

  it('refuses missing required fields and bad values with 400 validation_failed naming each field; nothing is saved', async () => {
    const form = await newForm(a.member);
    const r = await submitJson(t, form.id, { first_name: 'NoEmail', topic: 'Other', consent: false });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.issues).toEqual([
      { path: 'email', message: 'Email address is required' },
      { path: 'topic', message: 'Topic must be one of: Demo, Pricing' },
      { path: 'consent', message: 'I agree to be contacted is required' },
    ]);
    const bad = await submitJson(t, form.id, { ...good, email: 'not-an-email', message: { nested: true } });
    expect(bad.body.issues.map((i: { path: string }) => i.path)).toEqual(['email', 'message']);
    const nul = await submitJson(t, form.id, { ...good, message: 'a\u0000b' });
    expect(nul.status).toBe(400);
    expect(await submissions(t, form.id)).toEqual([]);
    expect(await formEvents(t, a.orgId).then((e) => e.filter((x) => x.payload.data.form.id === form.id))).toEqual([]);
  });

  it('refuses malformed bodies with clear 4xx codes', async () => {
    const form = await newForm(a.member);
    expect(await submitJson(t, form.id, '{"email":')).toMatchObject({ status: 400, body: { code: 'malformed_json' } });
    expect(await submitJson(t, form.id, '[1,2]')).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    expect(await submitJson(t, form.id, '"text"')).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    const plain = await fetch(`${t.origin}/api/forms/${form.id}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'email=x',
    });
    expect(plain.status).toBe(415);
    expect((await plain.json()).code).toBe('unsupported_media_type');
    const huge = await submitJson(t, form.id, { ...good, message: 'x'.repeat(200_000) });
    expect(huge).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
    expect(await submissions(t, form.id)).toEqual([]);
  });

  it('answers 404 for unknown, malformed and unpublished forms', async () => {
    const draft = await newForm(a.member, { published: false });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', draft.id]) {
      const r = await submitJson(t, id, good);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: `No published form with id ${id}`, code: 'not_found' });
    }
    expect(await submissions(t, draft.id)).toEqual([]);
  });

  it('fakes a success for a filled honeypot and keeps nothing', async () => {
    const form = await newForm(a.member, { thankYou: { redirectUrl: 'https://www.example.com/thanks' } });
    const before = await t.sql<{ n: number }>(`select count(*)::int as n from outbox_events where organization_id = ?`, [a.orgId]);
    const r = await submitJson(t, form.id, { ...good, email: 'bot@example.com', _hp_field: 'http://spam.example' });
    expect(r).toMatchObject({ status: 200, body: { ok: true, redirectUrl: 'https://www.example.com/thanks' } });
    const page = await submitUrlencoded(t, form.id, { email: 'bot2@example.com', topic: 'Demo', consent: 'on', _hp_field: 'x' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('https://www.example.com/thanks');
    expect(await contactsWith('bot@example.com')).toEqual([]);
    expect(await submissions(t, form.id)).toEqual([]);
    expect(await t.sql<{ n: number }>(`select count(*)::int as n from outbox_events where organization_id = ?`, [a.orgId])).toEqual(before);
  });

  it('keeps a submission without an email answer with no contact (form.submitted with contact null)', async () => {
    const form = await newForm(a.member, { fields: [{ id: 'feedback', label: 'Feedback', type: 'textarea', required: true }] });
    expect((await submitJson(t, form.id, { feedback: 'Nice site' })).status).toBe(200);
    expect(await submissions(t, form.id)).toMatchObject([{ contact_id: null, answers: { feedback: 'Nice site' }, pipeline_item_id: null }]);
    const event = (await formEvents(t, a.orgId)).find((e) => e.payload.data.form.id === form.id)!;
    expect(event.payload.data.contact).toBeNull();
    expect(EVENT_CATALOGUE['form.submitted'].payload.safeParse(event.payload).success).toBe(true);
  });
});

describe('POST /api/forms/<id>/submit as a urlencoded page post', () => {
  it('answers 303 to the thank-you page and keeps the submission', async () => {
    const form = await newForm(a.member);
    const r = await submitUrlencoded(t, form.id, { email: 'page@example.com', topic: 'Demo', consent: 'on', utm_medium: 'email' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe(`https://app.leadwire.test/f/${form.id}/thanks`);
    expect(await submissions(t, form.id)).toMatchObject([
      { answers: { email: 'page@example.com', topic: 'Demo', consent: true }, attribution: { utm: { medium: 'email' } } },
    ]);
  });

  it('re-renders the page with 400 and each error tied to its field; nothing is saved', async () => {
    const form = await newForm(a.member);
    const r = await submitUrlencoded(t, form.id, { email: 'nope', first_name: '<b>Ada</b>', topic: '', utm_source: 'ads' });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const prefix = `lw-${form.id.slice(0, 8)}`;
    expect(r.body).toContain('role="alert"');
    expect(r.body).toContain(`<a href="#${prefix}-email">Email address must be a valid email address</a>`);
    expect(r.body).toContain(`aria-invalid="true" aria-describedby="${prefix}-email-error"`);
    expect(r.body).toContain(`<p class="lwerror" id="${prefix}-topic-error">Topic is required</p>`.replace('lwerror', 'lw-error'));
    expect(r.body).toContain('value="&lt;b&gt;Ada&lt;/b&gt;"');
    expect(r.body).toContain('<input type="hidden" name="utm_source" value="ads">');
    expect(await submissions(t, form.id)).toEqual([]);
  });
});

describe('CORS and the rate limit', () => {
  it('answers a preflight from any origin without credentials, and allows the answer to be read', async () => {
    const form = await newForm(a.member);
    const pre = await fetch(`${t.origin}/api/forms/${form.id}/submit`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://www.customer.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    expect(pre.headers.get('access-control-allow-headers')).toContain('content-type');
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    const r = await submitJson(t, form.id, { ...good, email: 'cors@example.com' }, { origin: 'https://www.customer.example' });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const refused = await submitJson(t, form.id, {}, { origin: 'https://www.customer.example' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('allows 10 submissions a minute per form and address, counting refused ones; the next minute opens again', async () => {
    const form = await newForm(a.member);
    t.clock.freeze(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 60_000));
    try {
      for (let i = 0; i < 9; i++) expect((await submitJson(t, form.id, { ...good, email: `rate${i}@example.com` })).status).toBe(200);
      expect((await submitJson(t, form.id, {})).status).toBe(400);
      const r = await submitJson(t, form.id, { ...good, email: 'rate-over@example.com' });
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('rate_limited');
      expect(r.headers.get('retry-after')).toBe('60');
      expect(r.headers.get('x-ratelimit-limit')).toBe('10');
      const page = await submitUrlencoded(t, form.id, { email: 'rate-page@example.com', topic: 'Demo', consent: 'on' });
      expect(page.status).toBe(429);
      // A person is told to wait, not to correct anything, and their answers are kept.
      expect(page.body).toContain('Too many submissions in the last minute: please try again in 60 seconds.');
      expect(page.body).not.toContain('Please correct');
      expect(page.body).toContain('value="rate-page@example.com"');
      expect(await contactsWith('rate-over@example.com')).toEqual([]);
      // Another form is counted apart.
      const other = await newForm(a.member);
      expect((await submitJson(t, other.id, { ...good, email: 'rate-other@example.com' })).status).toBe(200);
      t.clock.advance(60_000);
      expect((await submitJson(t, form.id, { ...good, email: 'rate-over@example.com' })).status).toBe(200);
    } finally {
      t.clock.unfreeze();
    }
  });
});
