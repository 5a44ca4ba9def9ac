import { readFileSync } from 'node:fs';
import { validateHeaderValue } from 'node:http';
import { AppError, type Deps, type Issue, toPublicError } from '@leadwire/core';
import { formUrls, loadPublishedForm, type PublishedForm, submitToForm, thankYouOf } from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { embedMarkup, formMarkup, type FormState, hostedPage, hostedPageHeaders } from './forms-html.ts';
import { addJsonBodyParser } from './json-body.ts';
import { html, message, problem } from './pages-html.ts';
import { sendError } from './rest-surface.ts';
import { logFailure } from './log-failure.ts';

/** A form of 50 fields with long answers fits; anything bigger is not a form submission. */
const SUBMIT_BODY_LIMIT = 128 * 1024;
const LOADER = readFileSync(new URL('./assets/form-loader.js', import.meta.url));
/** The API's own prefix on this server (BASE_URL is what clients see, perhaps through a proxy). */
const apiPath = '/api';
const PUBLIC_HEADERS = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id'].join(', ');

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const isForm = (req: FastifyRequest) => /^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '');

/**
 * The form routes anyone may call, beside the application's REST surface: the submit endpoint (JSON from scripts, or
 * a urlencoded post from a page without JavaScript), the embed, the loader script, and the hosted page at the app
 * address. CORS allows any origin without credentials on the API routes.
 */
export async function formsPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  const urls = { baseUrl: deps.config.BASE_URL, appUrl: deps.config.APP_URL };

  // JSON or a urlencoded form, nothing else (Fastify would otherwise hand text/plain through as a string).
  app.removeContentTypeParser('text/plain');
  addJsonBodyParser(app);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, new URLSearchParams(body as string));
  });

  /** The hosted page again, with the status and what went wrong; never a JSON body for a person. */
  const pageFor = (reply: FastifyReply, form: PublishedForm, status: number, state: FormState) =>
    reply
      .status(status)
      .headers(hostedPageHeaders(form, urls))
      .type('text/html; charset=utf-8')
      .send(hostedPage(form.name, formMarkup(form, formUrls(urls, form.id).submitUrl, state)));
  const plainPage = (reply: FastifyReply, status: number, title: string, text: string, detail: string) =>
    reply
      .status(status)
      .headers({
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      })
      .type('text/html; charset=utf-8')
      .send(hostedPage(title, problem(text, detail)));

  app.setErrorHandler((err, req, reply) => {
    const pub = toPublicError(err);
    logFailure(req.log, err, pub, 'form route failed');
    if (req.url.startsWith(`${apiPath}/`) && !isForm(req)) {
      return sendError(reply, pub, { 'access-control-allow-origin': '*', 'access-control-expose-headers': PUBLIC_HEADERS });
    }
    void reply.headers({ ...pub.headers });
    return plainPage(
      reply,
      pub.status,
      pub.status === 404 ? 'Form not found' : 'Something went wrong',
      pub.body.error,
      pub.status === 404 ? 'The form may have been unpublished or removed.' : 'Nothing was saved. Please try again in a moment.',
    );
  });

  const cors = (reply: FastifyReply) =>
    reply.headers({ 'access-control-allow-origin': '*', 'access-control-expose-headers': PUBLIC_HEADERS });

  app.options(`${apiPath}/forms/:id/submit`, async (_req, reply) =>
    reply
      .status(204)
      .headers({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'content-type',
        'access-control-max-age': '86400',
      })
      .send(),
  );

  app.post(`${apiPath}/forms/:id/submit`, { bodyLimit: SUBMIT_BODY_LIMIT }, async (req: IdRequest, reply) => {
    const form = await loadPublishedForm(deps.db, req.params.id);
    const client = { ip: req.ip, setHeader: (name: string, value: string | number) => void reply.header(name, value) };
    if (!isForm(req)) {
      cors(reply);
      const thankYou = await submitToForm(deps, form, req.body, client);
      // No contact or submission id: an anonymous caller learns nothing about what the organization already knew.
      return reply.status(200).send({ ok: true, ...thankYou });
    }
    const fields = req.body as URLSearchParams;
    // The answer is settled before anything is kept: after the commit nothing may fail, or a visitor who retries a
    // 500 would submit twice.
    const location = locationAfterSubmit(form, formUrls(urls, form.id).thanksUrl);
    try {
      await submitToForm(deps, form, fields, client);
      return reply.redirect(location, 303);
    } catch (err) {
      // The 303 cannot carry errors, so a refused page post gets the form again, its answers kept, errors by their fields.
      if (!(err instanceof AppError) || (err.status !== 400 && err.status !== 429)) throw err;
      void reply.headers({ ...err.headers });
      if (err.status === 429) {
        // Nothing to correct: the answers are kept, and the wait is the one the retry-after header gives.
        const seconds = Number(reply.getHeader('retry-after'));
        const wait = seconds > 0 ? `in ${seconds} second${seconds === 1 ? '' : 's'}` : 'in a minute';
        const notice = `Too many submissions in the last minute: please try again ${wait}. Your answers are kept below.`;
        return pageFor(reply, form, 429, { values: fields, notice, hidden: attributionOf(fields) });
      }
      const issues = (err.details.issues as Issue[] | undefined) ?? [{ path: '', message: err.message }];
      const errors = Object.fromEntries(issues.map((i, n) => [i.path || `form-${n}`, i.message]));
      return pageFor(reply, form, err.status, { values: fields, errors, hidden: attributionOf(fields) });
    }
  });

  app.get(`${apiPath}/forms/:id/embed`, async (req: IdRequest, reply) => {
    const form = await loadPublishedForm(deps.db, req.params.id);
    cors(reply);
    return reply.header('cache-control', 'no-cache').send({ html: embedMarkup(form, formUrls(urls, form.id).submitUrl) });
  });

  app.get(`${apiPath}/embed/form-loader.js`, async (_req, reply) =>
    reply
      .headers({
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=300',
        'access-control-allow-origin': '*',
      })
      .send(LOADER),
  );

  app.get('/f/:id', async (req: IdRequest, reply) => {
    const form = await loadPublishedForm(deps.db, req.params.id);
    const query = new URLSearchParams(req.url.split('?')[1] ?? '');
    const hidden: Record<string, string> = { _landingPage: `${urls.appUrl}/f/${form.id}` };
    const referrer = req.headers.referer;
    if (referrer && referrer.length <= 2048) hidden._referrer = referrer;
    return pageFor(reply, form, 200, { hidden: { ...attributionOf(query), ...hidden } });
  });

  app.get('/f/:id/thanks', async (req: IdRequest, reply) => {
    const form = await loadPublishedForm(deps.db, req.params.id);
    const thankYou = thankYouOf(form);
    const text = 'message' in thankYou ? thankYou.message : 'Thank you! Your answers have been received.';
    return reply
      .status(200)
      .headers(hostedPageHeaders(form, urls))
      .type('text/html; charset=utf-8')
      .send(hostedPage(form.name, html`${message(text)}<p><a href="${formUrls(urls, form.id).hostedUrl}">Back to the form</a></p>`));
  });
}

/** The form's redirect, or its thank-you page when the redirect could not go in a Location header. */
function locationAfterSubmit(form: PublishedForm, thanksUrl: string): string {
  const thankYou = thankYouOf(form);
  if (!('redirectUrl' in thankYou)) return thanksUrl;
  try {
    validateHeaderValue('location', thankYou.redirectUrl);
    return thankYou.redirectUrl;
  } catch {
    return thanksUrl;
  }
}

/** The attribution keys of a query string or posted form, carried into the page's hidden fields. */
function attributionOf(fields: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of fields) {
    if ((/^utm_[a-z0-9_]{1,40}$/i.test(k) || k === '_referrer' || k === '_landingPage') && v.length <= 2048 && !(k in out)) out[k] = v;
    if (Object.keys(out).length >= 22) break;
  }
  return out;
}
