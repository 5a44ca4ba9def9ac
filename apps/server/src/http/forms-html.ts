import { createHash } from 'node:crypto';
import { type FormField, type FormRow, redirectTarget } from '@leadwire/core/surfaces';
import { documentOf, type Html, html } from './pages-html.ts';

/*
 * The markup of a form, shared by the hosted page (/f/<id>) and the embed (`{ html }`): a real <form method=post> to
 * the submit endpoint that works without JavaScript. Every label, option and value goes through `html`, which escapes.
 */

/** The hosted page's one stylesheet, allowed by its hash. Targets are at least 24 px (WCAG 2.2 2.5.8); focus is always visible. */
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#f6f7f9;margin:0}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}.lw-field{margin-top:1rem}label{display:block;font-weight:600}
input,select,textarea{box-sizing:border-box;width:100%;min-height:2.75rem;padding:.5rem;font:inherit;border:1px solid #767676;border-radius:4px;background:#fff;color:inherit}
.lw-check{display:flex;gap:.5rem;align-items:center}.lw-check input{width:1.5rem;height:1.5rem;min-height:1.5rem;margin:0}.lw-check label{font-weight:400}
[aria-invalid=true]{border:2px solid #b00020}.lw-error{color:#b00020;margin:.25rem 0 0}
:focus-visible{outline:3px solid #1f4fd8;outline-offset:2px}.lw-summary{border:2px solid #b00020;padding:.5rem 1rem;border-radius:4px}
.lw-summary a{color:#b00020}button{margin-top:1.5rem;min-height:2.75rem;min-width:6rem;padding:.6rem 1.2rem;font:inherit;border:0;border-radius:4px;background:#1f4fd8;color:#fff;cursor:pointer}
.lw-hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/*
 * hCaptcha and reCAPTCHA run in their invisible modes, started on submit by this script (allowed by its hash): when the
 * form's token field is still empty it holds the submit back, asks the provider for a token, puts it in `_captchaToken`
 * and submits. hCaptcha: an explicitly rendered `size: invisible` widget and `hcaptcha.execute(id)` (a challenge only
 * for traffic hCaptcha doubts); reCAPTCHA: v3 (`api.js?render=<siteKey>`, `grecaptcha.execute(siteKey, {action})`),
 * never a challenge, scored by the server (captcha.ts). Without the provider's script the post goes out tokenless and
 * the server answers `captcha_failed`. One listener on the document serves every form of a page (the embed).
 */
// A field may be named like a form property (`submit`, `matches`), which shadows it: the script calls the prototypes.
const SCRIPT = `(function(){if(window.leadwireCaptcha)return;window.leadwireCaptcha=1;
var E=Element.prototype,busy=new WeakSet(),ids=new WeakMap();
function q(f,s){return E.querySelector.call(f,s)}
function box(f){return q(f,'[data-lw-captcha]')}
function done(f,t){busy.delete(f);if(!t)return;q(f,'input[name="_captchaToken"]').value=t;HTMLFormElement.prototype.submit.call(f)}
function hc(f,b){if(!ids.has(f))ids.set(f,window.hcaptcha.render(b,{sitekey:b.getAttribute('data-sitekey'),size:'invisible',
callback:function(t){done(f,t)},'error-callback':function(){busy.delete(f)},'close-callback':function(){busy.delete(f)}}));return ids.get(f)}
window.leadwireHcaptchaReady=function(){document.querySelectorAll('form[data-leadwire-form]').forEach(function(f){var b=box(f);
if(b&&b.getAttribute('data-lw-captcha')==='hcaptcha')hc(f,b)})};
document.addEventListener('submit',function(e){var f=e.target;if(!(f instanceof HTMLFormElement)||!E.matches.call(f,'form[data-leadwire-form]'))return;
var b=box(f),k=b&&b.getAttribute('data-sitekey'),p=b&&b.getAttribute('data-lw-captcha');
if(!b||q(f,'input[name="_captchaToken"]').value)return;
if(p==='hcaptcha'&&window.hcaptcha){e.preventDefault();if(busy.has(f))return;busy.add(f);window.hcaptcha.execute(hc(f,b))}
else if(p==='recaptcha'&&window.grecaptcha){e.preventDefault();if(busy.has(f))return;busy.add(f);window.grecaptcha.ready(function(){
window.grecaptcha.execute(k,{action:'submit'}).then(function(t){done(f,t)},function(){busy.delete(f)})})}},true)})();`;
export const CAPTCHA_SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

/** The marker the script finds, the provider's key, and the field it fills (empty until the provider answers). */
const invisible = (provider: 'hcaptcha' | 'recaptcha', siteKey: string, attrs: Html) =>
  html`<div data-lw-captcha="${provider}" data-sitekey="${siteKey}"${attrs}></div><input type="hidden" name="_captchaToken" value="">`;

/** Each provider's widget: the script it loads, where that script and its frames come from, and the markup. */
const CAPTCHA = {
  // Turnstile's managed mode in "interaction-only" appearance: invisible unless Cloudflare wants a click, never a puzzle.
  turnstile: {
    script: () => 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    origins: ['https://challenges.cloudflare.com'],
    starter: false,
    widget: (siteKey: string) => html`<div class="cf-turnstile" data-sitekey="${siteKey}" data-appearance="interaction-only"></div>`,
  },
  hcaptcha: {
    script: () => 'https://js.hcaptcha.com/1/api.js?render=explicit&onload=leadwireHcaptchaReady',
    origins: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
    starter: true,
    widget: (siteKey: string) => invisible('hcaptcha', siteKey, html` class="h-captcha" data-size="invisible"`),
  },
  recaptcha: {
    script: (siteKey: string) => `https://www.google.com/recaptcha/api.js?render=${encodeURIComponent(siteKey)}`,
    origins: ['https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/', 'https://recaptcha.google.com/recaptcha/'],
    starter: true,
    widget: (siteKey: string) => invisible('recaptcha', siteKey, html` data-action="submit"`),
  },
} as const;

const originOf = (url: string) => new URL(url).origin;

/**
 * Nothing loads or runs but the stylesheet and, with a CAPTCHA connected, its provider's script and frames. The form
 * may post to the submit endpoint, whose 303 may lead to the app's thank-you page or the form's redirect (browsers
 * check form-action on the redirect too).
 */
export function hostedPageHeaders(form: FormRow, urls: { baseUrl: string; appUrl: string }): Record<string, string> {
  const captcha = form.captcha_provider ? CAPTCHA[form.captcha_provider].origins.join(' ') : '';
  const starter = form.captcha_provider && CAPTCHA[form.captcha_provider].starter ? `'sha256-${CAPTCHA_SCRIPT_HASH}' ` : '';
  const redirect = redirectTarget(form.redirect_url);
  const targets = new Set(["'self'", originOf(urls.baseUrl), originOf(urls.appUrl), ...(redirect ? [originOf(redirect)] : [])]);
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'${captcha ? ` ${captcha}` : ''}`,
    ...(captcha ? [`script-src ${starter}${captcha}`, `frame-src ${captcha}`, `connect-src ${captcha}`] : []),
    `form-action ${[...targets].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return {
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  };
}

export interface FormState {
  values?: URLSearchParams;
  errors?: Record<string, string>;
  /** A refusal that is nothing to correct (too many submissions): said on its own, above the form. */
  notice?: string;
  /** Hidden attribution inputs (utm_*, _referrer, _landingPage) the hosted page fills from its own request. */
  hidden?: Record<string, string>;
}

const AUTOCOMPLETE: Partial<Record<FormField['type'], string>> = { email: 'email', tel: 'tel', url: 'url' };

function control(f: FormField, id: string, value: string | undefined, aria: Html): Html {
  const req = f.required ? html` required` : '';
  switch (f.type) {
    case 'textarea':
      return html`<textarea id="${id}" name="${f.id}" rows="5" maxlength="10000"${req}${aria}>${value ?? ''}</textarea>`;
    case 'select':
      return html`<select id="${id}" name="${f.id}"${req}${aria}><option value="">Choose…</option>${(f.options ?? []).map(
        (o) => html`<option${o === value ? html` selected` : ''}>${o}</option>`,
      )}</select>`;
    case 'checkbox':
      return html`<input id="${id}" name="${f.id}" type="checkbox" value="on"${value ? html` checked` : ''}${req}${aria}>`;
    default:
      return html`<input id="${id}" name="${f.id}" type="${f.type}"${AUTOCOMPLETE[f.type] ? html` autocomplete="${AUTOCOMPLETE[f.type]}"` : ''}${
        f.type === 'number' ? html` step="any"` : html` maxlength="${f.type === 'url' ? 2048 : 1000}"`
      }${value ? html` value="${value}"` : ''}${req}${aria}>`;
  }
}

/** One labelled control; its error (if any) is tied to it with aria-describedby and marks it aria-invalid. */
function field(prefix: string, f: FormField, value: string | undefined, error: string | undefined): Html {
  const id = `${prefix}-${f.id}`;
  const aria = error ? html` aria-invalid="true" aria-describedby="${id}-error"` : html``;
  const label = html`<label for="${id}">${f.label}${f.required ? ' (required)' : ''}</label>`;
  const err = error ? html`<p class="lw-error" id="${id}-error">${error}</p>` : '';
  return f.type === 'checkbox'
    ? html`<div class="lw-field"><div class="lw-check">${control(f, id, value, aria)}${label}</div>${err}</div>`
    : html`<div class="lw-field">${label}${control(f, id, value, aria)}${err}</div>`;
}

/**
 * A consent checkbox (`_consent_<purpose>`), labelled with the exact text the entry records; never ticked in advance
 * (a pre-ticked box is no consent), only kept ticked when the page comes back with an error.
 */
function consentBox(
  prefix: string,
  p: { purpose: string; text: string; required: boolean },
  values?: URLSearchParams,
  error?: string,
): Html {
  const name = `_consent_${p.purpose}`;
  const id = `${prefix}-${name}`;
  const aria = error ? html` aria-invalid="true" aria-describedby="${id}-error"` : html``;
  const ticked = ['true', 'on'].includes(values?.get(name) ?? '');
  return html`<div class="lw-field"><div class="lw-check"><input id="${id}" name="${name}" type="checkbox" value="true"${ticked ? html` checked` : ''}${
    p.required ? html` required` : ''
  }${aria}><label for="${id}">${p.text}${p.required ? ' (required)' : ''}</label></div>${error ? html`<p class="lw-error" id="${id}-error">${error}</p>` : ''}</div>`;
}

/** The form itself. `prefix` keeps element ids unique when several forms share a page. */
export function formMarkup(form: FormRow, submitUrl: string, state: FormState = {}): Html {
  const prefix = `lw-${form.id.slice(0, 8)}`;
  const errors = Object.entries(state.errors ?? {});
  const byField = new Map<string, unknown>([
    ...form.fields.map((f) => [f.id, f] as const),
    ...(form.consent?.purposes ?? []).map((p) => [`_consent_${p.purpose}`, p] as const),
  ]);
  const captcha = form.captcha_provider && form.captcha_site_key ? CAPTCHA[form.captcha_provider] : null;
  return html`${state.notice ? html`<div class="lw-summary" role="alert" tabindex="-1"><p>${state.notice}</p></div>` : ''}${
    errors.length
      ? html`<div class="lw-summary" role="alert" tabindex="-1"><p>Please correct ${errors.length === 1 ? 'this' : 'these'}:</p><ul>${errors.map(
          ([name, message]) => (byField.has(name) ? html`<li><a href="#${prefix}-${name}">${message}</a></li>` : html`<li>${message}</li>`),
        )}</ul></div>`
      : ''
  }
<form method="post" action="${submitUrl}" data-leadwire-form="${form.id}">
${form.fields.map((f) => field(prefix, f, state.values?.get(f.id) ?? undefined, state.errors?.[f.id]))}
${(form.consent?.purposes ?? []).map((p) => consentBox(prefix, p, state.values, state.errors?.[`_consent_${p.purpose}`]))}
${Object.entries(state.hidden ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<div class="lw-hp" aria-hidden="true"><label for="${prefix}-hp">Leave this field empty</label><input id="${prefix}-hp" name="_hp_field" type="text" tabindex="-1" autocomplete="off"></div>
${captcha ? html`${captcha.widget(form.captcha_site_key!)}<noscript><p>This form's spam check needs JavaScript.</p></noscript>` : ''}
<button type="submit">Send</button>
</form>
${captcha?.starter ? html`<script>${{ __html: SCRIPT }}</script>` : ''}${captcha ? html`<script src="${captcha.script(form.captcha_site_key!)}" async defer></script>` : ''}`;
}

/** A whole hosted page around `body`. */
export function hostedPage(title: string, body: Html): string {
  return documentOf({ title, heading: title, style: STYLE, noindex: false }, body);
}

/**
 * The embed: the same form plus the honeypot's hiding rule, for a host page to insert. Scripts inserted through
 * innerHTML do not run, so the CAPTCHA script only loads when the loader (or the host) re-creates it.
 */
export function embedMarkup(form: FormRow, submitUrl: string): string {
  return html`<div class="leadwire-form"><style>.lw-hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}</style>
${formMarkup(form, submitUrl)}</div>`.__html;
}
