import { attribution, visitor } from './page.ts';
import { beacon } from './transport.ts';
import { OWN } from './universal.ts';

/**
 * Plain forms with an email field (spec, intake rule 1): each submission is copied to Leadwire as it happens, and the
 * form goes on to its own action untouched: the listener never cancels, never stops propagation, and sends with
 * sendBeacon (which outlives the navigation that follows). Listening on the document, in the capture phase, sees every
 * form, those added later included, before any host script can stop the event. A form its page then cancels (to send
 * it with its own script) is still captured: it was submitted.
 */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Never copied: secrets, payment details and the page's own tokens. */
const SENSITIVE = /pass|card|cc-|cvc|cvv|iban|ssn|secret|token|captcha|csrf/i;
const SKIP_TYPES = /^(password|file|submit|button|reset|image)$/;
const MAX_FIELDS = 50;
const MAX_VALUE = 10_000;

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

const emailField = (form: HTMLFormElement): Control | undefined =>
  form.querySelector<HTMLInputElement>('input[type=email]') ??
  (Array.from(form.elements) as Control[]).find(
    (e) => /e-?mail/i.test(e.name || '') && e.tagName === 'INPUT' && (e as HTMLInputElement).type === 'text',
  );

/** The form's answers by field name; the email under `email`, whatever the form calls it. */
function answers(form: HTMLFormElement, email: Control): Record<string, string> {
  // No prototype: a field named `constructor` or `toString` is just a name.
  const out = Object.create(null) as Record<string, string>;
  let n = 0;
  for (const e of Array.from(form.elements) as Control[]) {
    const name = e.name;
    const type = (e as HTMLInputElement).type || '';
    if (!name || e === email || e.disabled || name[0] === '_' || name === 'email' || SKIP_TYPES.test(type)) continue;
    if (SENSITIVE.test(name) || SENSITIVE.test(e.getAttribute('autocomplete') || '')) continue;
    // Hidden inputs are the page's bookkeeping, except the campaign parameters some pages keep in them.
    if (type === 'hidden' && !/^utm_/i.test(name)) continue;
    if ((type === 'checkbox' || type === 'radio') && !(e as HTMLInputElement).checked) continue;
    const value = e.tagName === 'SELECT' ? Array.from((e as HTMLSelectElement).selectedOptions, (o) => o.value).join(', ') : e.value;
    if (!value.trim()) continue;
    if (name in out) out[name] += `, ${value}`.slice(0, MAX_VALUE);
    else if (n++ < MAX_FIELDS) out[name] = value.slice(0, MAX_VALUE);
  }
  return out;
}

export function capturePlainForms(w: Window, endpoint: string, apiBase: string): void {
  w.document.addEventListener(
    'submit',
    (e) => {
      try {
        const form = e.target as HTMLFormElement;
        if (!form || form.tagName !== 'FORM' || form.hasAttribute(OWN) || form.hasAttribute('data-leadwire-ignore')) return;
        // Leadwire's own forms (the embed) already post to the API: counting them twice would double the lead.
        if ((form.getAttribute('action') || '') && form.action.indexOf(apiBase) === 0) return;
        const email = emailField(form);
        const address = email?.value.trim() || '';
        if (!email || !EMAIL.test(address)) return;
        const body = {
          ...attribution(w),
          ...answers(form, email),
          email: address,
          _form: (form.getAttribute('data-form-name') || '').slice(0, 100),
          _visitor: visitor(w),
        };
        beacon(w, endpoint, JSON.stringify(body));
      } catch {
        // never into the host page, never in the way of its submission
      }
    },
    true,
  );
}
