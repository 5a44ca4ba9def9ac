import { AppError, type Deps, toPublicError } from '@leadwire/core';
import { confirmLink, readConfirmLink, readWithdrawLink, withdrawLink } from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Html, html, layout, message, problem, SECURITY_HEADERS } from './pages-html.ts';
import { logFailure } from './log-failure.ts';

/** A confirmation is a token and a button; anything bigger is not one of ours. */
const BODY_LIMIT = 8 * 1024;

/**
 * The pages the consent mails link to (issue 30), at the app address, working without JavaScript. GET only shows what
 * the link is about, with a button: mail scanners and link previews that open every link confirm and withdraw nothing.
 * POST (the button) does it, then redirects to a done page. An unsubscribe link also takes RFC 8058's one-click POST
 * (`List-Unsubscribe=One-Click`, the token in the address), which mail clients send from their own unsubscribe button.
 */
export async function consentPagesPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) =>
    done(null, new URLSearchParams(body as string)),
  );
  app.addHook('onSend', async (_req, reply) => {
    void reply.headers(SECURITY_HEADERS);
  });
  app.setErrorHandler((err: Error, req, reply) => {
    const pub = toPublicError(err);
    logFailure(req.log, err, pub, 'consent page failed');
    void reply.headers({ ...pub.headers });
    if (err instanceof AppError && pub.status < 500) return refused(reply, err);
    return page(reply, pub.status, 'Something went wrong', problem('The link could not be handled.', 'Please try again in a moment.'));
  });

  const tokenOf = (req: FastifyRequest): string | null => {
    const fromBody = req.body instanceof URLSearchParams ? req.body.get('token') : null;
    const fromQuery = (req.query as { token?: unknown }).token;
    const token = fromBody ?? (typeof fromQuery === 'string' ? fromQuery : null);
    return token && token.length <= 2000 ? token : null;
  };
  const now = () => deps.clock.now();

  app.get('/consent/confirm', async (req, reply) => {
    const token = tokenOf(req);
    if (!token) return badLink(reply);
    const link = await readConfirmLink(deps.db, token, now());
    if (link.done) return page(reply, 200, 'Already confirmed', message('You confirmed this already: nothing more to do.'));
    return page(
      reply,
      200,
      'Confirm your subscription',
      html`<p>You ticked this on a form of ${link.orgName}:</p>
<ul>${link.texts.map((t) => html`<li>${t}</li>`)}</ul>
<form method="post" action="confirm">
<input type="hidden" name="token" value="${token}">
<button type="submit">Confirm</button>
</form>
<p>If it was not you, close this page: nothing is confirmed without the button.</p>`,
    );
  });

  app.post('/consent/confirm', async (req, reply) => {
    const token = tokenOf(req);
    if (!token) return badLink(reply);
    await confirmLink(deps.db, token, req.ip, now());
    // Post/redirect/get: reloading the done page confirms nothing again.
    return reply.redirect('confirm/done', 303);
  });
  app.get('/consent/confirm/done', async (_req, reply) =>
    page(
      reply,
      200,
      'Subscription confirmed',
      message('Thank you: your subscription is confirmed.', 'Every email we send has a link to unsubscribe.'),
    ),
  );

  app.get('/consent/withdraw', async (req, reply) => {
    const token = tokenOf(req);
    if (!token) return badLink(reply);
    const link = await readWithdrawLink(deps.db, token);
    return page(
      reply,
      200,
      'Unsubscribe',
      html`<p>Unsubscribe ${link.email ?? 'this address'} from ${link.orgName}?</p>
<form method="post" action="withdraw">
<input type="hidden" name="token" value="${token}">
<button type="submit">Unsubscribe</button>
</form>`,
    );
  });

  app.post('/consent/withdraw', async (req, reply) => {
    const token = tokenOf(req);
    if (!token) return badLink(reply);
    await withdrawLink(deps.db, token, req.ip, now());
    // A mail client's one-click POST reads no page.
    if (req.body instanceof URLSearchParams && req.body.get('List-Unsubscribe') === 'One-Click') return reply.status(200).send();
    return reply.redirect('withdraw/done', 303);
  });
  app.get('/consent/withdraw/done', async (_req, reply) =>
    page(reply, 200, 'Unsubscribed', message('You are unsubscribed.', 'You will get no more of these emails.')),
  );
}

function page(reply: FastifyReply, status: number, title: string, body: Html) {
  return reply.status(status).type('text/html; charset=utf-8').send(layout(title, body));
}

const badLink = (reply: FastifyReply) =>
  page(reply, 400, 'This link does not work', problem('This link is incomplete.', 'Open the link from your email again.'));

function refused(reply: FastifyReply, err: AppError) {
  if (err.code === 'consent_link_expired')
    return page(reply, 410, 'This link has expired', problem(err.message, 'Nothing was confirmed. Submit the form again for a new link.'));
  return page(reply, err.status, 'This link does not work', problem(err.message, 'Nothing was changed.'));
}
