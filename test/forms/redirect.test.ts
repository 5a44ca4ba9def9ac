/**
 * A form's redirect URL (issue 16, section 4): refused with control characters when written, and never able to fail a
 * plain-page submit after the submission is kept, even when the stored value is bad (an older release's data).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';
import { CONTACT_FORM, newForm, submissions, submitJson, submitUrlencoded } from './support.ts';

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL: 'https://api.leadwire.test/api', APP_URL: 'https://app.leadwire.test' });
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const answers = { email: 'ada@example.com', topic: 'Demo', consent: 'on' };
const thanksPage = (id: string) => `https://app.leadwire.test/f/${id}/thanks`;

describe('thankYou.redirectUrl as written', () => {
  it('refuses control characters anywhere (C0, DEL, C1) with 400 naming the field, on create and update; nothing is stored', async () => {
    const form = await newForm(a.member, { thankYou: { redirectUrl: 'https://www.example.com/thanks' } });
    for (const bad of [
      'https://www.example.com/thanks\r\nSet-Cookie: a=b',
      'https://www.example.com/a\nb',
      'https://www.example.com/a\tb',
      'https://www.example.com/a\u0001b',
      'https://www.example.com/a\u007fb',
      'https://www.example.com/a\u0085b',
      'https://www.example.com/a?x=\u009b',
    ]) {
      const created = await rest(t, 'POST', '/forms', a.memberKey, {
        ...CONTACT_FORM,
        name: 'Bad redirect',
        thankYou: { redirectUrl: bad },
      });
      expect(created.status, JSON.stringify(bad)).toBe(400);
      expect(created.body).toMatchObject({
        code: 'validation_failed',
        issues: [{ path: 'thankYou.redirectUrl', message: expect.stringMatching(/control character/) }],
      });
      const updated = await rest(t, 'PATCH', `/forms/${form.id}`, a.memberKey, { thankYou: { redirectUrl: bad } });
      expect(updated).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'thankYou.redirectUrl' }] } });
    }
    expect(await t.sql(`select redirect_url from forms where id = ?`, [form.id])).toEqual([
      { redirect_url: 'https://www.example.com/thanks' },
    ]);
    expect(await t.sql(`select 1 from forms where organization_id = ? and name = 'Bad redirect'`, [a.orgId])).toEqual([]);
  });

  it('takes a URL with non-ASCII characters and redirects to it percent-encoded (a raw Location header would fail)', async () => {
    const form = await newForm(a.member, { thankYou: { redirectUrl: 'https://www.example.com/merci/été?à=日本#señal' } });
    const r = await submitUrlencoded(t, form.id, answers);
    expect(r.status, String(r.body).slice(0, 300)).toBe(303);
    expect(r.headers.get('location')).toBe('https://www.example.com/merci/%C3%A9t%C3%A9?%C3%A0=%E6%97%A5%E6%9C%AC#se%C3%B1al');
    expect(await submissions(t, form.id)).toHaveLength(1);
  });
});

describe('a bad redirect URL stored by an older release', () => {
  const legacy = async (url: string) => {
    const form = await newForm(a.member, { thankYou: { redirectUrl: 'https://www.example.com/thanks' } });
    await t.sql(`update forms set redirect_url = ? where id = ?`, [url, form.id]);
    return form;
  };

  it('a page post is kept once and answered with the thank-you page, never a 500 after saving', async () => {
    for (const url of [
      'https://www.example.com/thanks\r\nSet-Cookie: a=b',
      'https://www.example.com/\u0001x',
      'not a url',
      'javascript:alert(1)',
    ]) {
      const form = await legacy(url);
      const r = await submitUrlencoded(t, form.id, answers);
      expect(r.status, `${JSON.stringify(url)}: ${String(r.body).slice(0, 300)}`).toBe(303);
      expect(r.headers.get('location')).toBe(thanksPage(form.id));
      expect(await submissions(t, form.id)).toHaveLength(1);

      // The JSON answer and the pages read the same way: the form's message instead of the unusable address.
      expect(await submitJson(t, form.id, { ...answers, consent: true })).toMatchObject({
        status: 200,
        body: { ok: true, message: expect.any(String) },
      });
      expect(await submissions(t, form.id)).toHaveLength(2);
      const thanks = await fetch(`${t.origin}/f/${form.id}/thanks`);
      expect(thanks.status).toBe(200);
      const page = await fetch(`${t.origin}/f/${form.id}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain(
        "form-action 'self' https://api.leadwire.test https://app.leadwire.test;",
      );
    }
  });
});

describe("a url field's answer", () => {
  it('refuses control characters inside the address (400 naming the field); nothing is kept', async () => {
    const form = await newForm(a.member, { fields: [{ id: 'site', label: 'Your site', type: 'url', required: true }] });
    for (const site of ['https://shop.example/a\r\nb', 'https://shop.example/a\tb', 'https://shop.example/\u0085']) {
      const r = await submitJson(t, form.id, { site });
      expect(r.status, JSON.stringify(site)).toBe(400);
      expect(r.body).toMatchObject({
        code: 'validation_failed',
        issues: [{ path: 'site', message: 'Your site must be a web address (https://…)' }],
      });
    }
    expect(await submissions(t, form.id)).toEqual([]);
    expect((await submitJson(t, form.id, { site: ' https://shop.example/a \n' })).status).toBe(200);
    expect(await submissions(t, form.id)).toMatchObject([{ answers: { site: 'https://shop.example/a' } }]);
  });
});
