import { createHash } from 'node:crypto';

/** Markup already escaped (or written by us): the only thing `html` inserts as is. */
export interface Html {
  readonly __html: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * Markup from a template: every interpolated value is escaped unless it is itself `Html`, so escaping is the default
 * rather than something each page must remember. Arrays are joined.
 */
type Value = Html | string | number | false | null | undefined | readonly Value[];

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  const part = (v: Value): string =>
    Array.isArray(v)
      ? v.map(part).join('')
      : typeof v === 'object' && v !== null
        ? (v as Html).__html
        : v == null || v === false
          ? ''
          : escapeHtml(String(v));
  return { __html: strings.reduce((out, s, i) => out + s + (i < values.length ? part(values[i]) : ''), '') };
}

/** The one stylesheet, inline and allowed by its hash, so the pages need no other request and no 'unsafe-inline'. */
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#f6f7f9;margin:0}
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}label{display:block;font-weight:600;margin-top:1rem}
input{box-sizing:border-box;width:100%;padding:.5rem;font:inherit;border:1px solid #888;border-radius:4px}
input[aria-invalid=true]{border-color:#b00020}.error{color:#b00020;margin:.25rem 0 0}.hint{color:#555;margin:.25rem 0 0;font-size:.9rem}
.summary{border:2px solid #b00020;padding:.5rem 1rem;border-radius:4px}button{margin-top:1.5rem;padding:.6rem 1.2rem;font:inherit;border:0;border-radius:4px;background:#1f4fd8;color:#fff}`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Nothing may load or run but that stylesheet; forms post only back here; no page may frame these (clickjacking a
 * password form). The token in the URL never leaves in a Referer: the page loads nothing and sends no referrer.
 */
export const SECURITY_HEADERS = {
  'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/**
 * A whole server-rendered page: one stylesheet (allowed by its hash in the page's CSP), a heading and `body`. The
 * account pages (`layout`) and the hosted forms share it.
 */
export function documentOf(opts: { title: string; heading: string; style: string; noindex: boolean }, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${
  opts.noindex
    ? html`<meta name="robots" content="noindex">
`
    : ''
}<title>${opts.title}</title>
<style>${{ __html: opts.style }}</style>
</head>
<body>
<main>
<h1>${opts.heading}</h1>
${body}
</main>
</body>
</html>
`.__html;
}

export function layout(title: string, body: Html): string {
  return documentOf({ title: `${title} · Leadwire`, heading: title, style: STYLE, noindex: true }, body);
}

export interface Field {
  name: string;
  label: string;
  type: 'password' | 'text';
  autocomplete: string;
  required: boolean;
  hint?: string;
  /** Shown again after an error (never for passwords). */
  value?: string;
}

/** One labelled input; its error (if any) is tied to it with aria-describedby and marks it aria-invalid. */
function field(f: Field, error: string | undefined): Html {
  const described = [f.hint ? `${f.name}-hint` : '', error ? `${f.name}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${f.name}">${f.label}</label>
<input id="${f.name}" name="${f.name}" type="${f.type}" autocomplete="${f.autocomplete}"${f.required ? html` required` : ''}${
    f.type === 'password' ? html` minlength="8" maxlength="256"` : html` maxlength="200"`
  }${f.value && f.type !== 'password' ? html` value="${f.value}"` : ''}${error ? html` aria-invalid="true"` : ''}${described ? html` aria-describedby="${described}"` : ''}>
${f.hint ? html`<p class="hint" id="${f.name}-hint">${f.hint}</p>` : ''}${error ? html`<p class="error" id="${f.name}-error">${error}</p>` : ''}
`;
}

/**
 * A form that posts back to the page it is on. The action is relative, so the pages work behind a proxy that mounts
 * the app under a path; the token goes in the body, not the action's query. A summary announces errors (role=alert).
 */
export function form(opts: {
  action: string;
  token: string;
  fields: Field[];
  errors: Record<string, string>;
  submit: string;
  intro: string;
}): Html {
  const problems = Object.entries(opts.errors);
  return html`<p>${opts.intro}</p>
${
  problems.length
    ? html`<div class="summary" role="alert"><p>Please correct ${problems.length === 1 ? 'this' : 'these'}:</p><ul>${problems.map(
        ([name, message]) => html`<li><a href="#${name}">${message}</a></li>`,
      )}</ul></div>`
    : ''
}
<form method="post" action="${opts.action}">
<input type="hidden" name="token" value="${opts.token}">
${opts.fields.map((f) => field(f, opts.errors[f.name]))}
<button type="submit">${opts.submit}</button>
</form>
`;
}

export const message = (text: string, detail?: string) => html`<p role="status">${text}</p>${detail ? html`<p>${detail}</p>` : ''}`;
export const problem = (text: string, detail: string) => html`<p role="alert">${text}</p><p>${detail}</p>`;
