import { attribution, visitor } from './page.ts';
import { post } from './transport.ts';

/**
 * The universal lead-capture form, rendered into every element carrying `data-leadwire-lead-capture`. Accessible as
 * the hosted forms are (WCAG 2.2 AA): a visible label per field, errors tied to their fields and announced, the
 * browser's focus ring kept (and strengthened where the page allows a stylesheet), targets 44 px high.
 */

export const MARK = 'data-leadwire-lead-capture';
/** Set on our own forms, so the plain-form capture leaves them alone. */
export const OWN = 'data-leadwire-form';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TEXT = {
  sent: 'Thank you! Your message has been received.',
  busy: 'We have received many messages in the last hour. Please try again a little later.',
  failed: 'Sorry, your message could not be sent. Please try again.',
  // The status line sits after the fields and the Send button, where the person who pressed Send is; focus moves to the
  // first field in error, which names its own error (aria-describedby).
  fix: 'Please correct the fields marked above.',
  emailMissing: 'Enter your email address.',
  emailBad: 'Enter an email address like name@example.com.',
};
const FIELDS: [name: string, label: string, type: string, autocomplete: string][] = [
  ['name', 'Name', 'text', 'name'],
  ['email', 'Email (required)', 'email', 'email'],
  ['phone', 'Phone', 'tel', 'tel'],
  ['message', 'Message', 'textarea', 'off'],
];
const CSS =
  '.lw-lc{display:grid;gap:12px;max-width:32rem;font:inherit}.lw-lc label{display:block;font-weight:600;margin-bottom:4px}' +
  '.lw-lc input,.lw-lc textarea{box-sizing:border-box;width:100%;min-height:44px;padding:8px;font:inherit;border:1px solid #555;border-radius:4px}' +
  '.lw-lc [aria-invalid=true]{border:2px solid #b00020}.lw-lc .lw-err{color:#b00020;margin:4px 0 0}' +
  '.lw-lc button{min-height:44px;min-width:44px;padding:8px 20px;font:inherit;cursor:pointer}' +
  '.lw-lc :focus-visible{outline:3px solid #1a56db;outline-offset:2px}';

let seq = 0;

type Make = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, string>, text?: string) => HTMLElementTagNameMap[K];

function maker(d: Document): Make {
  return (tag, attrs = {}, text) => {
    const e = d.createElement(tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]!);
    if (text) e.textContent = text;
    return e;
  };
}

/** One stylesheet per page; a Content-Security-Policy that refuses it leaves the browser's own (visible) focus ring. */
function addStyle(d: Document, make: Make) {
  if (d.getElementById('lw-lc-css')) return;
  (d.head || d.documentElement).appendChild(make('style', { id: 'lw-lc-css' }, CSS));
}

export function renderAll(w: Window, endpoint: string): void {
  const d = w.document;
  const make = maker(d);
  d.querySelectorAll(`[${MARK}]`).forEach((host) => {
    if (host.querySelector(`[${OWN}]`)) return;
    addStyle(d, make);
    host.appendChild(render(w, make, endpoint));
  });
}

function render(w: Window, make: Make, endpoint: string): HTMLFormElement {
  const id = `lw-lc-${++seq}`;
  const form = make('form', { class: 'lw-lc', [OWN]: '', novalidate: '', 'aria-label': 'Contact us' });
  const inputs: Record<string, HTMLInputElement | HTMLTextAreaElement> = {};
  for (const [name, label, type, autocomplete] of FIELDS) {
    const box = make('div');
    const fid = `${id}-${name}`;
    box.appendChild(make('label', { for: fid }, label));
    const input = type === 'textarea' ? make('textarea', { rows: '4' }) : make('input', { type });
    for (const [k, v] of [
      ['id', fid],
      ['name', name],
      ['autocomplete', autocomplete],
      ['aria-describedby', `${fid}-err`],
    ])
      input.setAttribute(k!, v!);
    if (name === 'email') input.setAttribute('aria-required', 'true');
    box.appendChild(input);
    box.appendChild(make('p', { id: `${fid}-err`, class: 'lw-err' }));
    inputs[name] = input;
    form.appendChild(box);
  }
  // The honeypot: out of sight and out of the tab order; people leave it empty, form-filling bots do not.
  const trap = make('div', { 'aria-hidden': 'true' });
  trap.style.cssText = 'position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden';
  trap.appendChild(make('label', { for: `${id}-hp` }, 'Leave this field empty'));
  trap.appendChild(make('input', { id: `${id}-hp`, name: '_hp_field', tabindex: '-1', autocomplete: 'off' }));
  form.appendChild(trap);
  const button = make('button', { type: 'submit' }, 'Send');
  form.appendChild(button);
  const status = make('p', { role: 'status', 'aria-live': 'polite', class: 'lw-status' });
  form.appendChild(status);

  const fieldError = (name: string, text: string) => {
    const input = inputs[name];
    if (!input) return false;
    const err = w.document.getElementById(`${input.id}-err`)!;
    err.textContent = text;
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    return true;
  };
  const refuse = (errors: Record<string, string>, summary: string) => {
    let first: HTMLElement | undefined;
    for (const name in errors) if (fieldError(name, errors[name]!)) first ??= inputs[name];
    status.textContent = summary;
    first?.focus();
  };

  let sending = false;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (sending) return;
    try {
      for (const name in inputs) fieldError(name, '');
      const email = inputs.email!.value.trim();
      if (!EMAIL.test(email)) return refuse({ email: email ? TEXT.emailBad : TEXT.emailMissing }, TEXT.fix);
      const body: Record<string, string> = { ...attribution(w) };
      for (const name in inputs) if (inputs[name]!.value.trim()) body[name] = inputs[name]!.value.trim();
      body._hp_field = (form.elements.namedItem('_hp_field') as HTMLInputElement).value;
      const vid = visitor(w);
      if (vid) body._visitor = vid;
      sending = true;
      button.setAttribute('aria-disabled', 'true');
      status.textContent = 'Sending…';
      void post(w, endpoint, JSON.stringify(body))
        .then((answer) => {
          sending = false;
          button.removeAttribute('aria-disabled');
          if (answer.status === 200) {
            form.reset();
            status.textContent = answer.body.message || TEXT.sent;
          } else if (answer.status === 429) status.textContent = TEXT.busy;
          else if (answer.status === 400 && answer.body.issues?.length) {
            const errors: Record<string, string> = {};
            for (const i of answer.body.issues) errors[i.path] = i.message;
            refuse(errors, TEXT.fix);
          } else status.textContent = TEXT.failed;
        })
        .catch(() => undefined);
    } catch {
      sending = false;
      status.textContent = TEXT.failed;
    }
  });
  return form;
}
