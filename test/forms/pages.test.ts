import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { newForm, submissions, submitUrlencoded } from './support.ts';

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp({ BASE_URL: 'https://api.leadwire.test/api', APP_URL: 'https://app.leadwire.test' });
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const HOSTILE = `"><script>alert(1)</script><img src=x onerror=alert(2)>`;
const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${t.origin}${path}`, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
};

describe('the hosted page GET /f/<id>', () => {
  it('is a real form posting to the submit endpoint, with labels tied to inputs and a strict CSP', async () => {
    const form = await newForm(a.member);
    const r = await get(`/f/${form.id}?utm_source=twitter&utm_campaign=launch&other=1`, { referer: 'https://news.example/item' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self' https:\/\/api\.leadwire\.test https:\/\/app\.leadwire\.test; frame-ancestors 'none'; base-uri 'none'$/,
    );
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.text).toContain(
      `<form method="post" action="https://api.leadwire.test/api/forms/${form.id}/submit" data-leadwire-form="${form.id}">`,
    );
    const p = `lw-${form.id.slice(0, 8)}`;
    expect(r.text).toContain(
      `<label for="${p}-email">Email address (required)</label><input id="${p}-email" name="email" type="email" autocomplete="email" maxlength="1000" required>`,
    );
    expect(r.text).toContain(
      `<input id="${p}-consent" name="consent" type="checkbox" value="on" required><label for="${p}-consent">I agree to be contacted (required)</label>`,
    );
    expect(r.text).toContain(
      `<select id="${p}-topic" name="topic" required><option value="">Choose…</option><option>Demo</option><option>Pricing</option></select>`,
    );
    expect(r.text).toContain('<input type="hidden" name="utm_source" value="twitter">');
    expect(r.text).toContain('<input type="hidden" name="utm_campaign" value="launch">');
    expect(r.text).toContain('<input type="hidden" name="_referrer" value="https://news.example/item">');
    expect(r.text).toContain(`<input type="hidden" name="_landingPage" value="https://app.leadwire.test/f/${form.id}">`);
    expect(r.text).not.toContain('name="other"');
    expect(r.text).toContain('name="_hp_field" type="text" tabindex="-1" autocomplete="off"');
    expect(r.text).not.toContain('<script');
  });

  it('escapes every label, option, name and value', async () => {
    const form = await newForm(a.member, {
      name: `Form ${HOSTILE}`,
      fields: [
        { id: 'email', label: `Email ${HOSTILE}`, type: 'email', required: true },
        { id: 'pick', label: `Pick ${HOSTILE}`, type: 'select', required: false, options: [`A ${HOSTILE}`, 'B & C'] },
      ],
      thankYou: { message: `Thanks ${HOSTILE}` },
    });
    const pages = [
      (await get(`/f/${form.id}?utm_source=${encodeURIComponent(HOSTILE)}`)).text,
      (await get(`/f/${form.id}/thanks`)).text,
      (await submitUrlencoded(t, form.id, { email: HOSTILE, pick: HOSTILE, utm_x: HOSTILE })).body as string,
      JSON.parse((await get(`/api/forms/${form.id}/embed`)).text).html as string,
    ];
    for (const html of pages) {
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain('<img');
      expect(html).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
    }
    expect(pages[0]).toContain('<option>B &amp; C</option>');
    expect(pages[1]).toContain(`<p role="status">Thanks &quot;&gt;&lt;script&gt;`);
  });

  it('answers unknown, malformed and unpublished forms with an HTML 404 page', async () => {
    const draft = await newForm(a.member, { published: false });
    for (const path of [`/f/${draft.id}`, '/f/00000000-0000-4000-8000-000000000000', '/f/nope', `/f/${draft.id}/thanks`]) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.text).toContain('<h1>Form not found</h1>');
    }
    const post = await submitUrlencoded(t, draft.id, { email: 'x@example.com' });
    expect(post.status).toBe(404);
    expect(post.body).toContain('Form not found');
  });

  it('shows the thank-you message, and lets the CAPTCHA provider in only when one is connected (Turnstile invisible)', async () => {
    const form = await newForm(a.member, {
      captcha: { provider: 'turnstile', siteKey: 'site-key', secret: 's' },
      thankYou: { redirectUrl: 'https://www.example.com/thanks' },
    });
    const r = await get(`/f/${form.id}`);
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain('script-src https://challenges.cloudflare.com');
    expect(csp).toContain('frame-src https://challenges.cloudflare.com');
    expect(csp).toContain("form-action 'self' https://api.leadwire.test https://app.leadwire.test https://www.example.com;");
    expect(r.text).toContain('<div class="cf-turnstile" data-sitekey="site-key" data-appearance="interaction-only"></div>');
    expect(r.text).toContain('<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script>');
    const plain = await newForm(a.member, { thankYou: { message: 'We will call you.' } });
    expect((await get(`/f/${plain.id}/thanks`)).text).toContain('<p role="status">We will call you.</p>');
  });
});

describe('invisible hCaptcha and reCAPTCHA on the hosted page', () => {
  const inlineScripts = (text: string) => [...text.matchAll(/<script>([^]*?)<\/script>/g)].map((m) => m[1]!);
  const sha256 = (s: string) => createHash('sha256').update(s).digest('base64');

  it('hCaptcha: an invisible widget, explicit rendering, and a starter script allowed by its hash alone', async () => {
    const form = await newForm(a.member, { captcha: { provider: 'hcaptcha', siteKey: 'hc-site', secret: 's' } });
    const r = await get(`/f/${form.id}`);
    expect(r.text).toContain(
      '<div data-lw-captcha="hcaptcha" data-sitekey="hc-site" class="h-captcha" data-size="invisible"></div><input type="hidden" name="_captchaToken" value="">',
    );
    expect(r.text).toContain("<noscript><p>This form's spam check needs JavaScript.</p></noscript>");
    expect(r.text).toContain(
      '<script src="https://js.hcaptcha.com/1/api.js?render=explicit&amp;onload=leadwireHcaptchaReady" async defer></script>',
    );
    const scripts = inlineScripts(r.text);
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toContain('window.hcaptcha.execute(');
    expect(scripts[0]).toContain("size:'invisible'");
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain(`script-src 'sha256-${sha256(scripts[0]!)}' https://hcaptcha.com https://*.hcaptcha.com;`);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    // Compiled, not run: a syntax error in the script fails here.
    expect(() => new Script(scripts[0]!)).not.toThrow();
  });

  it('reCAPTCHA v3: no checkbox, the site key in the script address, the same hashed starter script; hostile keys escaped', async () => {
    const form = await newForm(a.member, { captcha: { provider: 'recaptcha', siteKey: `key ${HOSTILE}`, secret: 's' } });
    const r = await get(`/f/${form.id}`);
    expect(r.text).not.toContain('g-recaptcha');
    expect(r.text).not.toContain('<script>alert');
    expect(r.text).not.toContain('<img');
    expect(r.text).toContain(
      '<div data-lw-captcha="recaptcha" data-sitekey="key &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" data-action="submit"></div>',
    );
    expect(r.text).toContain(
      `<script src="https://www.google.com/recaptcha/api.js?render=${encodeURIComponent(`key ${HOSTILE}`)}" async defer></script>`,
    );
    const scripts = inlineScripts(r.text);
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).toContain("window.grecaptcha.execute(k,{action:'submit'})");
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain(
      `script-src 'sha256-${sha256(scripts[0]!)}' https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/ https://recaptcha.google.com/recaptcha/;`,
    );
    expect(csp).not.toContain('unsafe-inline');
    // Turnstile needs no starter: its page carries no inline script and its CSP no hash.
    const turnstile = await newForm(a.member, { captcha: { provider: 'turnstile', siteKey: 'ts', secret: 's' } });
    const tr = await get(`/f/${turnstile.id}`);
    expect(inlineScripts(tr.text)).toEqual([]);
    expect(tr.headers.get('content-security-policy')).toContain('script-src https://challenges.cloudflare.com;');
  });
});

describe('the embed and its loader', () => {
  it('GET /api/forms/<id>/embed returns { html } for any origin: the same form, posting to the submit endpoint', async () => {
    const form = await newForm(a.member, { captcha: { provider: 'hcaptcha', siteKey: 'hc-site', secret: 's' } });
    const r = await get(`/api/forms/${form.id}/embed`, { origin: 'https://www.customer.example' });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const { html } = JSON.parse(r.text);
    expect(html).toContain(`action="https://api.leadwire.test/api/forms/${form.id}/submit"`);
    expect(html).toContain('<div data-lw-captcha="hcaptcha" data-sitekey="hc-site" class="h-captcha" data-size="invisible"></div>');
    expect(html).toContain(
      '<script src="https://js.hcaptcha.com/1/api.js?render=explicit&amp;onload=leadwireHcaptchaReady" async defer></script>',
    );
    // The starter script travels with the embed (the loader re-creates it); the host page's CSP must allow its hash.
    expect(html).toMatch(/<script>\(function\(\)\{if\(window\.leadwireCaptcha\)return;[^<]+<\/script>/);
    expect(html).toContain('.lw-hp{position:absolute;left:-10000px');
    const draft = await newForm(a.member, { published: false });
    const missing = await get(`/api/forms/${draft.id}/embed`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toEqual({
      error: `No published form with id ${draft.id}`,
      code: 'not_found',
      requestId: expect.any(String),
    });
  });

  it('serves the loader as plain JavaScript', async () => {
    const r = await get('/api/embed/form-loader.js');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(r.text).toContain("document.createElement('script')");
    // Compiled, not run: a syntax error in the served file fails here.
    expect(() => new Script(r.text)).not.toThrow();
  });

  it('a no-JS post keeps the answers and attribution when re-rendered, and stores nothing', async () => {
    const form = await newForm(a.member);
    const r = await submitUrlencoded(t, form.id, {
      email: 'ok@example.com',
      topic: 'Demo',
      message: 'Keep me',
      _landingPage: 'https://www.example.com/',
    });
    expect(r.status).toBe(400);
    expect(r.body).toContain('Keep me</textarea>');
    expect(r.body).toContain('<input type="hidden" name="_landingPage" value="https://www.example.com/">');
    expect(await submissions(t, form.id)).toEqual([]);
  });
});
