import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { type FakeCaptcha, newForm, startFakeCaptcha, submissions, submitJson, submitUrlencoded } from './support.ts';

const SECRETS = { turnstile: '0x4AAAAAAA-turnstile-secret', hcaptcha: '0x-hcaptcha-secret', recaptcha: '6Lc-recaptcha-secret' };
const TOKEN_KEY = { turnstile: 'cf-turnstile-response', hcaptcha: 'g-recaptcha-response', recaptcha: 'g-recaptcha-response' } as const;

let t: TestApp;
let a: TestOrg;
let fake: FakeCaptcha;
beforeAll(async () => {
  fake = await startFakeCaptcha(SECRETS);
  t = await initTestApp({
    CAPTCHA_TURNSTILE_VERIFY_URL: `${fake.url}/turnstile`,
    CAPTCHA_HCAPTCHA_VERIFY_URL: `${fake.url}/hcaptcha`,
    CAPTCHA_RECAPTCHA_VERIFY_URL: `${fake.url}/recaptcha`,
    CAPTCHA_VERIFY_TIMEOUT_MS: '2000',
  });
  a = await newTestOrg(t);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const answers = { email: 'human@example.com', topic: 'Demo', consent: true };

describe.each(['turnstile', 'hcaptcha', 'recaptcha'] as const)('a form with %s connected', (provider) => {
  const create = () => newForm(a.member, { captcha: { provider, siteKey: `site-${provider}`, secret: SECRETS[provider] } });

  it('verifies the token with the provider (secret, response, remoteip) and keeps the submission', async () => {
    const form = await create();
    fake.calls.length = 0;
    const r = await submitJson(t, form.id, { ...answers, [TOKEN_KEY[provider]]: 'good-token' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(fake.calls).toEqual([
      {
        path: `/${provider}`,
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
        fields: {
          secret: SECRETS[provider],
          response: 'good-token',
          remoteip: '127.0.0.1',
          ...(provider === 'hcaptcha' ? { sitekey: `site-${provider}` } : {}),
        },
      },
    ]);
    expect(await submissions(t, form.id)).toHaveLength(1);
  });

  it('takes the token as _captchaToken too, and from a page post', async () => {
    const form = await create();
    expect((await submitJson(t, form.id, { ...answers, _captchaToken: 'good-token' })).status).toBe(200);
    const page = await submitUrlencoded(t, form.id, {
      email: 'page@example.com',
      topic: 'Demo',
      consent: 'on',
      [TOKEN_KEY[provider]]: 'good-token',
    });
    expect(page.status).toBe(303);
    expect(await submissions(t, form.id)).toHaveLength(2);
  });

  it('refuses a missing or invalid token with 400 captcha_failed and keeps nothing', async () => {
    const form = await create();
    fake.calls.length = 0;
    const missing = await submitJson(t, form.id, answers);
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('captcha_failed');
    expect(fake.calls).toEqual([]);
    const invalid = await submitJson(t, form.id, { ...answers, _captchaToken: 'forged' });
    expect(invalid).toMatchObject({ status: 400, body: { code: 'captcha_failed' } });
    const page = await submitUrlencoded(t, form.id, { email: 'page@example.com', topic: 'Demo', consent: 'on', _captchaToken: 'forged' });
    expect(page.status).toBe(400);
    expect(page.body).toContain('The CAPTCHA check failed');
    expect(await submissions(t, form.id)).toEqual([]);
    // Field errors come first: a token is single-use, so it is not spent on answers that would be refused anyway.
    fake.calls.length = 0;
    expect((await submitJson(t, form.id, { _captchaToken: 'good-token' })).body.code).toBe('validation_failed');
    expect(fake.calls).toEqual([]);
  });
});

describe('CAPTCHA edge cases', () => {
  it('refuses a low reCAPTCHA v3 score', async () => {
    const form = await newForm(a.member, { captcha: { provider: 'recaptcha', siteKey: 'v3', secret: SECRETS.recaptcha } });
    fake.mode = 'low-score';
    try {
      expect((await submitJson(t, form.id, { ...answers, _captchaToken: 'good-token' })).body.code).toBe('captcha_failed');
    } finally {
      fake.mode = 'protocol';
    }
  });

  it('answers 503 captcha_unavailable when the provider fails, saving nothing', async () => {
    const form = await newForm(a.member, { captcha: { provider: 'turnstile', siteKey: 's', secret: SECRETS.turnstile } });
    fake.mode = 'error';
    try {
      const r = await submitJson(t, form.id, { ...answers, _captchaToken: 'good-token' });
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('captcha_unavailable');
      expect(r.headers.get('retry-after')).toBe('5');
      expect(JSON.stringify(r.body)).not.toContain(SECRETS.turnstile);
    } finally {
      fake.mode = 'protocol';
    }
    expect(await submissions(t, form.id)).toEqual([]);
  });

  it('verifies with the secret of the connected provider only; a form without CAPTCHA calls nobody', async () => {
    const form = await newForm(a.member);
    fake.calls.length = 0;
    expect((await submitJson(t, form.id, answers)).status).toBe(200);
    expect(fake.calls).toEqual([]);
  });
});
