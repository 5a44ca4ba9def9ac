import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newForm, submitJson } from '../forms/support.ts';
import { newTestOrg, refusal, rest, type TestOrg } from './contacts-support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL: 'https://api.leadwire.test/api', APP_URL: 'https://app.leadwire.test' });
  a = await newTestOrg(t);
  b = await newTestOrg(t);
});
afterAll(async () => t?.close());

const answers = (email: string) => ({ email, topic: 'Demo', consent: true, first_name: 'Ada' });

describe('forms.submissions: what the console lists under a form', () => {
  it('lists a form’s submissions newest first with answers, contact and attribution, page by page', async () => {
    const form = await newForm(a.member);
    const other = await newForm(a.member, { name: 'Other' });
    t.clock.set(new Date('2026-11-20T10:00:00Z'));
    const first = await submitJson(t, form.id, {
      ...answers('first@example.com'),
      utm_source: 'newsletter',
      utm_campaign: 'autumn',
      _referrer: 'https://news.example.org/',
      _landingPage: 'https://www.example.com/demo?utm_source=newsletter',
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    t.clock.set(new Date('2026-11-20T10:05:00Z'));
    // No email field answered: kept without a contact.
    expect((await submitJson(t, other.id, answers('x@example.com'))).status).toBe(200);
    expect((await submitJson(t, form.id, { ...answers('second@example.com') })).status).toBe(200);

    const page1 = await a.member.forms.submissions.query({ id: form.id, limit: 1 });
    expect(page1.items).toEqual([
      {
        id: expect.any(String),
        createdAt: expect.stringMatching(/^2026-11-20T10:05:00/),
        contact: { id: expect.any(String), email: 'second@example.com' },
        answers: { email: 'second@example.com', topic: 'Demo', consent: true, first_name: 'Ada' },
        attribution: { utm: {}, referrer: null, landingPage: null },
      },
    ]);
    expect(page1.nextCursor).toBe(page1.items[0]!.id);
    const page2 = await a.member.forms.submissions.query({ id: form.id, limit: 1, cursor: page1.nextCursor! });
    expect(page2).toEqual({
      items: [
        {
          id: expect.any(String),
          createdAt: expect.stringMatching(/^2026-11-20T10:00:00/),
          contact: { id: expect.any(String), email: 'first@example.com' },
          answers: { email: 'first@example.com', topic: 'Demo', consent: true, first_name: 'Ada' },
          attribution: {
            utm: { source: 'newsletter', campaign: 'autumn' },
            referrer: 'https://news.example.org/',
            landingPage: 'https://www.example.com/demo?utm_source=newsletter',
          },
        },
      ],
      nextCursor: null,
    });

    // REST, as the OpenAPI document names it.
    const r = await rest(t, 'GET', `/forms/${form.id}/submissions?limit=5`, a.memberKey);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.items.map((s: { contact: { email: string } }) => s.contact.email)).toEqual(['second@example.com', 'first@example.com']);
  });

  it('shows a submission without its contact once the contact is in the trash, and one without an email without one', async () => {
    const form = await newForm(a.member, {
      name: 'No email',
      fields: [{ id: 'note', label: 'Note', type: 'text', required: true }],
    });
    expect((await submitJson(t, form.id, { note: 'hello' })).status).toBe(200);
    const trashed = await newForm(a.member, { name: 'Trashed' });
    expect((await submitJson(t, trashed.id, answers('gone@example.com'))).status).toBe(200);
    await t.sql(`update contacts set deleted_at = now() where organization_id = ? and email = ?`, [a.orgId, 'gone@example.com']);
    for (const id of [form.id, trashed.id]) {
      const { items } = await a.member.forms.submissions.query({ id });
      expect(items).toHaveLength(1);
      expect(items[0]!.contact).toBeNull();
    }
  });

  it('refuses another workspace’s form, an unknown id and hostile input with a 4xx', async () => {
    const form = await newForm(a.member);
    expect(await refusal(b.member.forms.submissions.query({ id: form.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(a.member.forms.submissions.query({ id: 'not-a-uuid' }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    expect(await refusal(a.member.forms.submissions.query({ id: form.id, limit: 1000 }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    const r = await rest(t, 'GET', `/forms/${form.id}/submissions?cursor=%27%3B%20drop`, a.memberKey);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });
});

describe('the console’s addresses: embed snippet and website snippets', () => {
  it('gives each form its embed snippet, and the website snippets filled with the workspace id and BASE_URL', async () => {
    const form = await newForm(a.member);
    expect(form.embedSnippet).toBe(
      `<div data-leadwire-form="${form.id}"></div><script src="https://api.leadwire.test/api/embed/form-loader.js" async></script>`,
    );
    expect(await a.member.tracking.snippets.query()).toEqual({
      organizationId: a.orgId,
      tracking: `<script async src="https://api.leadwire.test/api/embed/tracking.js" data-org="${a.orgId}"></script>`,
      leadCapture: `<div data-leadwire-lead-capture></div>\n<script async src="https://api.leadwire.test/api/embed/lead-capture.js" data-org="${a.orgId}"></script>`,
    });
  });
});
