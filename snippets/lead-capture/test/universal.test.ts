import { afterEach, describe, expect, it } from 'vitest';
import { CAPTURE, closePages, openPage, ORG, type Page, type PageOptions } from './harness.ts';

afterEach(closePages);

const MARKED = '<!doctype html><html><head></head><body><h1>Talk to us</h1><div id="lead" data-leadwire-lead-capture></div></body></html>';

function withForm(
  url = 'https://shop.example/contact?utm_source=news&utm_campaign=spring&x=1#top',
  opts: PageOptions = {},
): { page: Page; form: HTMLFormElement } {
  const page = openPage(url, { html: MARKED, referrer: 'https://www.google.com/', ...opts });
  page.paste();
  const form = page.win.document.querySelector('#lead form') as unknown as HTMLFormElement;
  return { page, form };
}

const field = (form: HTMLFormElement, name: string) => form.elements.namedItem(name) as HTMLInputElement;
const status = (form: HTMLFormElement) => form.querySelector('[role=status]')!.textContent;

describe('the universal lead-capture form', () => {
  it('renders into the marked element: a label for every field, the email required, a hidden honeypot', () => {
    const { page, form } = withForm();
    expect(form).toBeTruthy();
    const labels = Array.from(form.querySelectorAll('label'), (l) => [
      l.textContent,
      page.win.document.getElementById(l.getAttribute('for')!)?.getAttribute('name'),
    ]);
    expect(labels).toEqual([
      ['Name', 'name'],
      ['Email (required)', 'email'],
      ['Phone', 'phone'],
      ['Message', 'message'],
      ['Leave this field empty', '_hp_field'],
    ]);
    expect(field(form, 'email').getAttribute('type')).toBe('email');
    expect(field(form, 'email').getAttribute('aria-required')).toBe('true');
    // Errors are tied to their fields; the status region announces outcomes.
    expect(field(form, 'email').getAttribute('aria-describedby')).toBe(`${field(form, 'email').id}-err`);
    expect(form.querySelector('[role=status]')?.getAttribute('aria-live')).toBe('polite');
    const hp = field(form, '_hp_field');
    expect(hp.getAttribute('tabindex')).toBe('-1');
    expect(hp.parentElement?.getAttribute('aria-hidden')).toBe('true');
    expect(hp.parentElement?.style.left).toBe('-10000px');
    // Targets of 44 px (WCAG 2.2 asks 24) and a visible focus ring, in the one stylesheet the script adds.
    const css = page.win.document.getElementById('lw-lc-css')!.textContent;
    expect(css).toMatch(/button\{min-height:44px;min-width:44px/);
    expect(css).toMatch(/input,\.lw-lc textarea\{[^}]*min-height:44px/);
    expect(css).toMatch(/:focus-visible\{outline:3px solid/);
    expect(page.sent).toEqual([]);
  });

  it('sends the answers, utm_*, _referrer, _landingPage and the lw_vid visitor as text to POST /api/capture/<org>', async () => {
    const { page, form } = withForm(undefined, { cookies: ['lw_vid=abcdefghijklmnopqrstuvwxyz12'] });
    field(form, 'name').value = ' Ada Lovelace ';
    field(form, 'email').value = 'ada@example.com';
    field(form, 'message').value = 'Call me';
    form.requestSubmit();
    await page.settle();
    expect(page.sent).toEqual([
      {
        via: 'fetch',
        url: CAPTURE,
        body: {
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          message: 'Call me',
          _hp_field: '',
          utm_source: 'news',
          utm_campaign: 'spring',
          _referrer: 'https://www.google.com/',
          _landingPage: 'https://shop.example/contact?utm_source=news&utm_campaign=spring&x=1',
          _visitor: 'abcdefghijklmnopqrstuvwxyz12',
        },
        init: { method: 'POST', body: expect.any(String), credentials: 'omit' },
      },
    ]);
    // No headers: a text/plain "simple" request, never preflighted.
    expect(page.sent[0]!.init).not.toHaveProperty('headers');
    expect(status(form)).toBe('Thanks, we will be in touch.');
    expect(field(form, 'email').value).toBe('');
  });

  it('refuses a missing or malformed email in the page: error by the field, announced, focus moved there, nothing sent', () => {
    const { page, form } = withForm();
    form.requestSubmit();
    const email = field(form, 'email');
    expect(page.win.document.getElementById(`${email.id}-err`)!.textContent).toBe('Enter your email address.');
    expect(email.getAttribute('aria-invalid')).toBe('true');
    expect(status(form)).toBe('Please correct the fields marked above.');
    // "above" is where the fields are: the status line comes after every field and the Send button.
    const line = form.querySelector('[role=status]')!;
    for (const el of form.querySelectorAll('input, textarea, button')) {
      expect(el.compareDocumentPosition(line) & page.win.Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    }
    expect(page.win.document.activeElement).toBe(email);
    email.value = 'not-an-address';
    form.requestSubmit();
    expect(page.win.document.getElementById(`${email.id}-err`)!.textContent).toBe('Enter an email address like name@example.com.');
    expect(page.sent).toEqual([]);
  });

  it("shows the server's field errors by their fields", async () => {
    const { page, form } = withForm(undefined, {
      answer: {
        status: 400,
        body: {
          error: 'Validation failed',
          code: 'validation_failed',
          issues: [{ path: 'phone', message: 'Phone must be at most 1000 characters' }],
        },
      },
    });
    field(form, 'email').value = 'ada@example.com';
    field(form, 'phone').value = '12';
    form.requestSubmit();
    await page.settle();
    expect(page.win.document.getElementById(`${field(form, 'phone').id}-err`)!.textContent).toBe('Phone must be at most 1000 characters');
    expect(field(form, 'phone').getAttribute('aria-invalid')).toBe('true');
    // Kept for the person to correct.
    expect(field(form, 'email').value).toBe('ada@example.com');
  });

  it('sends a filled honeypot as it is (the server fakes a success and keeps nothing)', async () => {
    const { page, form } = withForm();
    field(form, 'email').value = 'bot@example.com';
    field(form, '_hp_field').value = 'http://spam.example';
    form.requestSubmit();
    await page.settle();
    expect(page.sent[0]?.body._hp_field).toBe('http://spam.example');
  });

  it('shows a friendly message on 429 and keeps the answers', async () => {
    const { page, form } = withForm(undefined, {
      answer: { status: 429, body: { error: 'Rate limit exceeded; retry in 1800 s', code: 'rate_limited' } },
    });
    field(form, 'email').value = 'ada@example.com';
    form.requestSubmit();
    await page.settle();
    expect(status(form)).toBe('We have received many messages in the last hour. Please try again a little later.');
    expect(field(form, 'email').value).toBe('ada@example.com');
  });

  it('says the message was not sent when the network fails, and never throws into the page', async () => {
    for (const fetchMode of ['rejects', 'throws'] as const) {
      const { page, form } = withForm(undefined, { fetch: fetchMode });
      const errors: unknown[] = [];
      page.win.addEventListener('error', (e) => errors.push(e));
      field(form, 'email').value = 'ada@example.com';
      expect(() => form.requestSubmit()).not.toThrow();
      await page.settle();
      expect(status(form)).toBe('Sorry, your message could not be sent. Please try again.');
      expect(errors).toEqual([]);
    }
  });

  it('leaves out the visitor id under Global Privacy Control', async () => {
    const { page, form } = withForm(undefined, { cookies: ['lw_vid=abcdefghijklmnopqrstuvwxyz12'], gpc: true });
    field(form, 'email').value = 'ada@example.com';
    form.requestSubmit();
    await page.settle();
    expect(page.sent[0]?.body).not.toHaveProperty('_visitor');
  });
});

describe('loading', () => {
  it('waits for the document when loaded async before the page is parsed, renders at once when deferred', () => {
    const early = openPage('https://shop.example/', { html: MARKED, readyState: 'loading' });
    early.paste();
    expect(early.win.document.querySelector('#lead form')).toBeNull();
    early.win.document.dispatchEvent(new early.win.Event('DOMContentLoaded'));
    expect(early.win.document.querySelectorAll('#lead form')).toHaveLength(1);

    const deferred = openPage('https://shop.example/', { html: MARKED, readyState: 'interactive' });
    deferred.paste();
    expect(deferred.win.document.querySelectorAll('#lead form')).toHaveLength(1);
  });

  it('adds one global, and a second copy of the script renders and sends nothing more', async () => {
    const page = openPage('https://shop.example/', { html: MARKED });
    const before = new Set(Object.keys(page.win));
    page.paste();
    page.paste();
    // happy-dom lists elements with an id as window properties (browsers keep them off the window's own keys).
    const added = Object.keys(page.win).filter((k) => !before.has(k) && !page.win.document.getElementById(k));
    expect(added).toEqual(['__leadwireLeadCapture']);
    const forms = page.win.document.querySelectorAll('#lead form');
    expect(forms).toHaveLength(1);
    const form = forms[0] as unknown as HTMLFormElement;
    field(form, 'email').value = 'ada@example.com';
    form.requestSubmit();
    await page.settle();
    expect(page.sent).toHaveLength(1);
  });

  it('does nothing without data-org, and finds the API under /api from the older /embed address', () => {
    const page = openPage('https://shop.example/', { html: MARKED });
    page.paste({});
    expect(page.win.document.querySelector('#lead form')).toBeNull();
    page.paste({ 'data-org': ORG }, 'https://crm.example.org/embed/lead-capture.js');
    const form = page.win.document.querySelector('#lead form') as unknown as HTMLFormElement;
    field(form, 'email').value = 'ada@example.com';
    form.requestSubmit();
    expect(page.sent[0]?.url).toBe(`https://crm.example.org/api/capture/${ORG}`);
  });
});
