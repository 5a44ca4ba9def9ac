import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, refusal, rest, type TestOrg } from '../internal/contacts-support.ts';
import { CONTACT_FORM, newForm, submissions, submitJson } from './support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL: 'https://api.leadwire.test/api', APP_URL: 'https://app.leadwire.test' });
  a = await newTestOrg(t);
  b = await newTestOrg(t);
});
afterAll(async () => t?.close());

const captcha = { provider: 'turnstile', siteKey: '0x4AAAA-site', secret: '0x4AAAA-very-secret' };

describe('forms in the application', () => {
  it('POST /api/forms answers 201 with the form, its addresses and no CAPTCHA secret', async () => {
    const r = await rest(t, 'POST', '/forms', a.memberKey, { ...CONTACT_FORM, captcha, thankYou: { message: 'Thanks!' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.id as string;
    expect(r.body).toEqual({
      id: expect.any(String),
      name: 'Contact us',
      fields: CONTACT_FORM.fields,
      published: true,
      pipelineId: null,
      captcha: { provider: 'turnstile', siteKey: '0x4AAAA-site', secretSet: true },
      thankYou: { message: 'Thanks!' },
      consent: null,
      submitUrl: `https://api.leadwire.test/api/forms/${id}/submit`,
      embedUrl: `https://api.leadwire.test/api/forms/${id}/embed`,
      hostedUrl: `https://app.leadwire.test/f/${id}`,
      embedSnippet: `<div data-leadwire-form="${id}"></div><script src="https://api.leadwire.test/api/embed/form-loader.js" async></script>`,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    for (const answer of [r, await rest(t, 'GET', `/forms/${id}`, a.memberKey), await rest(t, 'GET', '/forms', a.memberKey)]) {
      expect(JSON.stringify(answer.body)).not.toContain('very-secret');
    }
    expect(await t.sql(`select captcha_secret from forms where id = ?`, [id])).toEqual([{ captcha_secret: '0x4AAAA-very-secret' }]);
  });

  it('lists newest first with pages, gets, updates (keeping the stored secret) and deletes', async () => {
    const org = await newTestOrg(t);
    const first = await newForm(org.member, { name: 'First' });
    const second = await newForm(org.owner, { name: 'Second', captcha });
    const page = await org.member.forms.list.query({ limit: 1 });
    expect(page.items.map((f) => f.name)).toEqual(['Second']);
    expect((await org.member.forms.list.query({ limit: 1, cursor: page.nextCursor! })).items.map((f) => f.name)).toEqual(['First']);

    const updated = await org.member.forms.update.mutate({
      id: second.id,
      name: 'Renamed',
      captcha: { provider: 'turnstile', siteKey: 'new-site' },
      thankYou: { redirectUrl: 'https://www.example.com/thanks' },
    });
    expect(updated).toMatchObject({
      name: 'Renamed',
      captcha: { provider: 'turnstile', siteKey: 'new-site', secretSet: true },
      thankYou: { redirectUrl: 'https://www.example.com/thanks' },
      fields: CONTACT_FORM.fields,
    });
    expect(await t.sql(`select captcha_secret from forms where id = ?`, [second.id])).toEqual([{ captcha_secret: captcha.secret }]);
    // Another provider needs its own secret.
    expect(await refusal(org.member.forms.update.mutate({ id: second.id, captcha: { provider: 'hcaptcha', siteKey: 'x' } }))).toMatchObject(
      { status: 400, code: 'validation_failed' },
    );
    const cleared = await org.member.forms.update.mutate({ id: second.id, captcha: null, thankYou: null, published: false });
    expect(cleared).toMatchObject({ captcha: null, thankYou: null, published: false });
    expect(await t.sql(`select captcha_secret from forms where id = ?`, [second.id])).toEqual([{ captcha_secret: null }]);

    const patched = await rest(t, 'PATCH', `/forms/${first.id}`, org.memberKey, { published: false });
    expect(patched).toMatchObject({ status: 200, body: { published: false, name: 'First' } });
    expect((await rest(t, 'DELETE', `/forms/${first.id}`, org.memberKey)).status).toBe(204);
    expect(await refusal(org.member.forms.get.query({ id: first.id }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('DELETE with a JSON content type and no body deletes (clients such as automation platforms send the header anyway)', async () => {
    const created = await rest(t, 'POST', '/forms', a.memberKey, { ...CONTACT_FORM, name: 'Header only' });
    const res = await fetch(`${t.origin}/api/forms/${created.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${a.memberKey}`, 'content-type': 'application/json' },
    });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(await t.sql(`select id from forms where id = ?`, [created.body.id])).toEqual([]);
    // A body that is there is still read, and refused when it is not JSON.
    const again = await rest(t, 'POST', '/forms', a.memberKey, { ...CONTACT_FORM, name: 'Bad body' });
    const bad = await fetch(`${t.origin}/api/forms/${again.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${a.memberKey}`, 'content-type': 'application/json' },
      body: '{"oops"',
    });
    expect({ status: bad.status, code: ((await bad.json()) as { code: string }).code }).toEqual({ status: 400, code: 'malformed_json' });
  });

  it('refuses bad definitions with 400 naming the field', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const r = await rest(t, 'POST', '/forms', a.memberKey, { ...CONTACT_FORM, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      return [...new Set(r.body.issues.map((i: { path: string }) => i.path))];
    };
    expect(await bad({ name: '' })).toEqual(['name']);
    expect(await bad({ fields: [] })).toEqual(['fields']);
    expect(await bad({ fields: [{ id: 'a', label: 'A', type: 'select', required: false }] })).toEqual(['fields.0.options']);
    expect(await bad({ fields: [{ id: 'a', label: 'A', type: 'text', options: ['x'] }] })).toEqual(['fields.0.options']);
    expect(
      await bad({
        fields: [
          { id: 'a', label: 'Same', type: 'text' },
          { id: 'b', label: 'same', type: 'text' },
        ],
      }),
    ).toEqual(['fields.1.label']);
    expect(await bad({ fields: [{ id: '_hp_field', label: 'A', type: 'text' }] })).toEqual(['fields.0.id']);
    expect(await bad({ fields: [{ id: 'utm_source', label: 'A', type: 'text' }] })).toEqual(['fields.0.id']);
    expect(await bad({ fields: [{ id: 'a', label: 'A', type: 'file' }] })).toEqual(['fields.0.type']);
    expect(await bad({ captcha: { provider: 'recaptcha', siteKey: 'x' } })).toEqual(['captcha.secret']);
    expect(await bad({ captcha: { provider: 'friendly', siteKey: 'x', secret: 'y' } })).toEqual(['captcha.provider']);
    expect(await bad({ thankYou: { redirectUrl: 'javascript:alert(1)' } })).toEqual(['thankYou.redirectUrl']);
    expect(await t.sql(`select 1 from forms where organization_id = ? and name = ''`, [a.orgId])).toEqual([]);
  });

  it("keeps organizations apart: another organization's forms and pipelines look unknown", async () => {
    const form = await newForm(a.member);
    expect(await refusal(b.owner.forms.get.query({ id: form.id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(b.owner.forms.delete.mutate({ id: form.id }))).toMatchObject({ status: 404 });
    const pipeline = await a.owner.pipelines.create.mutate({ name: `A only ${Date.now()}`, stages: ['New'] });
    expect(await refusal(b.member.forms.create.mutate({ ...CONTACT_FORM, pipelineId: pipeline.id }))).toMatchObject({
      status: 422,
      code: 'pipeline_not_found',
    });
    expect((await b.owner.forms.list.query({})).items.map((f) => f.id)).not.toContain(form.id);
  });

  it('needs credentials', async () => {
    const r = await fetch(`${t.origin}/api/forms`);
    expect(r.status).toBe(401);
    expect(await rest(t, 'GET', '/forms', a.publicKey)).toMatchObject({ status: 403, body: { code: 'wrong_api_surface' } });
  });

  it('a deleted form stops taking submissions; its submissions stay with their contacts', async () => {
    const form = await newForm(a.member);
    expect((await submitJson(t, form.id, { email: 'kept@example.com', topic: 'Demo', consent: true })).status).toBe(200);
    const [sub] = await submissions(t, form.id);
    await a.member.forms.delete.mutate({ id: form.id });
    expect((await submitJson(t, form.id, { email: 'late@example.com', topic: 'Demo', consent: true })).status).toBe(404);
    expect(await t.sql(`select form_id, form_name from form_submissions where id = ?`, [sub!.id])).toEqual([
      { form_id: null, form_name: 'Contact us' },
    ]);
    const timeline = await a.owner.contacts.timeline.query({ id: sub!.contact_id!, limit: 10 });
    expect(timeline.items).toContainEqual(expect.objectContaining({ kind: 'form_submission', formId: null, formName: 'Contact us' }));
  });

  it("a merge moves the duplicate's submissions to the primary", async () => {
    const form = await newForm(a.member);
    await submitJson(t, form.id, { email: 'dup1@example.com', topic: 'Demo', consent: true });
    await submitJson(t, form.id, { email: 'dup2@example.com', topic: 'Demo', consent: true });
    const [s1, s2] = await submissions(t, form.id);
    const merged = await a.owner.contacts.merge.mutate({ primaryId: s1!.contact_id!, secondaryIds: [s2!.contact_id!] });
    expect(merged.moved.formSubmissions).toBe(1);
    expect((await submissions(t, form.id)).map((s) => s.contact_id)).toEqual([s1!.contact_id, s1!.contact_id]);
  });
});
