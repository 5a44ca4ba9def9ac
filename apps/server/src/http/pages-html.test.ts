import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { escapeHtml, form, html, layout, SECURITY_HEADERS } from './pages-html.ts';

describe('html', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const v = `<script>alert("x" & 'y')</script>`;
    expect(html`<p title="${v}">${v}</p>`.__html).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;</p>',
    );
    expect(escapeHtml('&amp;')).toBe('&amp;amp;');
  });

  it('inserts nested markup as is, joins arrays, and drops empty values', () => {
    expect(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>${false}${undefined}${null}${0}`.__html).toBe(
      '<ul><li>a&lt;</li><li>b</li></ul>0',
    );
  });
});

describe('layout', () => {
  it('carries exactly the inline style the Content-Security-Policy allows by hash', () => {
    const page = layout('T', html`<p>x</p>`);
    const style = /<style>([\s\S]*)<\/style>/.exec(page)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(SECURITY_HEADERS['content-security-policy']).toContain(`style-src 'sha256-${hash}'`);
    expect(page).not.toContain('<script');
  });

  it('escapes the title', () => {
    expect(layout('<i>', html``)).toContain('<title>&lt;i&gt; · Leadwire</title>');
  });
});

describe('form', () => {
  it('never shows a password back, and ties each error to its field', () => {
    const out = form({
      action: 'reset-password',
      token: 'lwr_x',
      intro: 'i',
      submit: 's',
      errors: { secret: 'too short' },
      fields: [{ name: 'secret', label: 'Secret', type: 'password', autocomplete: 'new-password', required: true, value: 'hunter2' }],
    }).__html;
    expect(out).not.toContain('hunter2');
    expect(out).toContain('<label for="secret">Secret</label>');
    expect(out).toContain('aria-invalid="true" aria-describedby="secret-error"');
    expect(out).toContain('<p class="error" id="secret-error">too short</p>');
    expect(out).toContain('<li><a href="#secret">too short</a></li>');
  });
});
