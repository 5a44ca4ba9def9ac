import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerOf, type TestApp } from '../support/app.ts';
import type { Client } from '../internal/contacts-support.ts';

/** A form definition most tests use: an email, names, a choice, a consent box and a message. */
export const CONTACT_FORM = {
  name: 'Contact us',
  published: true,
  fields: [
    { id: 'email', label: 'Email address', type: 'email' as const, required: true },
    { id: 'first_name', label: 'First name', type: 'text' as const, required: false },
    { id: 'lastName', label: 'Last name', type: 'text' as const, required: false },
    { id: 'topic', label: 'Topic', type: 'select' as const, required: true, options: ['Demo', 'Pricing'] },
    { id: 'consent', label: 'I agree to be contacted', type: 'checkbox' as const, required: true },
    { id: 'message', label: 'Your message', type: 'textarea' as const, required: false },
  ],
};

export const newForm = (client: Client, overrides: Record<string, unknown> = {}) =>
  client.forms.create.mutate({ ...CONTACT_FORM, ...overrides });

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

const answer = (res: Response): Promise<Answer> => answerOf(res);

/** POST JSON to the public submit endpoint, no key, optionally from a foreign origin. */
export const submitJson = async (t: TestApp, formId: string, body: unknown, headers: Record<string, string> = {}) =>
  answer(
    await fetch(`${t.origin}/api/forms/${formId}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );

/** POST a urlencoded form as a browser without JavaScript does; redirects are not followed. */
export const submitUrlencoded = async (t: TestApp, formId: string, fields: Record<string, string>) =>
  answer(
    await fetch(`${t.origin}/api/forms/${formId}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    }),
  );

export const submissions = (t: TestApp, formId: string) =>
  t.sql<{ id: string; contact_id: string | null; answers: any; attribution: any; pipeline_item_id: string | null }>(
    `select id, contact_id, answers, attribution, pipeline_item_id from form_submissions where form_id = ? order by created_at`,
    [formId],
  );

export const formEvents = (t: TestApp, orgId: string) =>
  t.sql<{ payload: any }>(`select payload from outbox_events where organization_id = ? and event = 'form.submitted' order by created_at`, [
    orgId,
  ]);

export interface CaptchaCall {
  path: string;
  contentType: string | undefined;
  fields: Record<string, string>;
}

export interface FakeCaptcha {
  url: string;
  calls: CaptchaCall[];
  /** What the next answers say (default: success when the token is `good-token` and the secret matches). */
  mode: 'protocol' | 'error' | 'low-score';
  close(): Promise<void>;
}

/**
 * A local stand-in for the providers' siteverify endpoints, speaking their protocol: a form-encoded POST of secret,
 * response and remoteip, answered with `{ success, error-codes }` (reCAPTCHA v3 adds a score).
 */
export async function startFakeCaptcha(secrets: Record<string, string>): Promise<FakeCaptcha> {
  const calls: CaptchaCall[] = [];
  const fake: FakeCaptcha = { url: '', calls, mode: 'protocol', close: async () => {} };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const fields = Object.fromEntries(new URLSearchParams(body));
      calls.push({ path: req.url ?? '', contentType: req.headers['content-type'], fields });
      if (fake.mode === 'error') {
        res.writeHead(500).end('oops');
        return;
      }
      const provider = (req.url ?? '').slice(1);
      const ok = req.method === 'POST' && fields.secret === secrets[provider] && fields.response === 'good-token';
      const extra = provider === 'recaptcha' ? { score: fake.mode === 'low-score' ? 0.1 : 0.9 } : {};
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: ok, 'error-codes': ok ? [] : ['invalid-input-response'], ...extra }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}
