import { afterEach, describe, expect, it } from 'vitest';
import { CAPTURE, closePages, openPage, ORG, type PageOptions, submit } from './harness.ts';

afterEach(closePages);

const SIGNUP = `<!doctype html><html><head></head><body>
<form id="signup" action="/subscribe" method="post" data-form-name="Newsletter">
  <input type="hidden" name="_token" value="csrf-secret"><input type="hidden" name="plan" value="gold">
  <input type="hidden" name="utm_content" value="footer">
  <label>Name <input name="your-name" value="Ada Lovelace"></label>
  <label>Email <input type="email" name="your-email" value="Ada@Example.com"></label>
  <label>Password <input type="password" name="pw" value="hunter2"></label>
  <input name="card_number" value="4111111111111111"><input name="cc" autocomplete="cc-number" value="4111">
  <select name="topics" multiple><option selected>Pricing</option><option>Jobs</option><option selected>Demo</option></select>
  <label><input type="checkbox" name="consent" value="yes" checked> Yes</label><label><input type="checkbox" name="other" value="no"> No</label>
  <input name="constructor" value="c">
  <input name="off" value="x" disabled><button type="submit" name="go" value="1">Subscribe</button>
</form>
<form id="search" action="/search"><input name="q" value="shoes"></form>
<form id="ours" action="https://api.leadwire.test/api/forms/123/submit"><input type="email" name="email" value="ada@example.com"></form>
<form id="ignored" data-leadwire-ignore><input type="email" name="email" value="ada@example.com"></form>
</body></html>`;

function site(opts: PageOptions = {}) {
  const page = openPage('https://shop.example/join?utm_source=ads', { html: SIGNUP, ...opts });
  page.paste();
  const form = (id: string) => page.win.document.getElementById(id) as unknown as HTMLFormElement;
  return { page, form };
}

describe('plain forms with an email field', () => {
  it('are copied by beacon as they submit, labelled by data-form-name, and still submit (nothing cancels them)', () => {
    const { page, form } = site({ cookies: ['lw_vid=abcdefghijklmnopqrstuvwxyz12'] });
    expect(submit(page, form('signup'))).toEqual({ goesOn: true });
    expect(page.sent).toEqual([
      {
        via: 'beacon',
        url: CAPTURE,
        body: {
          utm_source: 'ads',
          _landingPage: 'https://shop.example/join?utm_source=ads',
          utm_content: 'footer',
          'your-name': 'Ada Lovelace',
          topics: 'Pricing, Demo',
          consent: 'yes',
          constructor: 'c',
          email: 'Ada@Example.com',
          _form: 'Newsletter',
          _visitor: 'abcdefghijklmnopqrstuvwxyz12',
        },
      },
    ]);
    // Never the page's secrets: passwords, card numbers, CSRF tokens, other hidden fields, the button.
    expect(JSON.stringify(page.sent)).not.toMatch(/hunter2|4111|csrf-secret|gold|"go"|"off"/);
  });

  it('are sent without a name when the form has no data-form-name (the server calls it "Website form")', () => {
    const { page, form } = site();
    form('signup').removeAttribute('data-form-name');
    submit(page, form('signup'));
    expect(page.sent[0]?.body._form).toBe('');
  });

  it("leave alone forms without a usable email, Leadwire's own forms and forms marked data-leadwire-ignore", () => {
    const { page, form } = site();
    for (const id of ['search', 'ours', 'ignored']) expect(submit(page, form(id))).toEqual({ goesOn: true });
    (form('signup').elements.namedItem('your-email') as HTMLInputElement).value = 'not an email';
    submit(page, form('signup'));
    expect(page.sent).toEqual([]);
  });

  it('are captured when added to the page later, and an email input without type=email counts by its name', () => {
    const { page } = site();
    const late = page.win.document.createElement('form');
    late.innerHTML = '<input name="EMAIL" value="late@example.com"><input name="FNAME" value="Lee">';
    page.win.document.body.appendChild(late);
    submit(page, late as unknown as HTMLFormElement);
    expect(page.sent[0]?.body).toMatchObject({ email: 'late@example.com', FNAME: 'Lee', _form: '' });
  });

  it('fall back to fetch with keepalive when sendBeacon is missing, refuses or throws', () => {
    for (const beacon of ['missing', 'refuses', 'throws'] as const) {
      const { page, form } = site({ beacon });
      submit(page, form('signup'));
      expect(page.sent).toEqual([
        {
          via: 'fetch',
          url: CAPTURE,
          body: expect.objectContaining({ email: 'Ada@Example.com' }),
          init: expect.objectContaining({ keepalive: true, credentials: 'omit' }),
        },
      ]);
    }
  });

  it('still submit, without an error in the page, when every transport fails', async () => {
    for (const [beacon, fetchMode] of [
      ['throws', 'throws'],
      ['missing', 'missing'],
      ['refuses', 'rejects'],
    ] as const) {
      const { page, form } = site({ beacon, fetch: fetchMode });
      const errors: unknown[] = [];
      page.win.addEventListener('error', (e) => errors.push(e));
      expect(submit(page, form('signup'))).toEqual({ goesOn: true });
      await page.settle();
      expect(errors).toEqual([]);
    }
  });

  it('are captured once with the script pasted twice', () => {
    const { page, form } = site();
    page.paste({ 'data-org': ORG });
    submit(page, form('signup'));
    expect(page.sent).toHaveLength(1);
  });
});
