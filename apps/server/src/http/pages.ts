import { AppError, type Deps, toPublicError } from '@leadwire/core';
import {
  acceptInvite,
  AcceptInviteInput,
  type Client,
  INVITE_PREFIX,
  RESET_PREFIX,
  resetPassword,
  ResetPasswordInput,
} from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type Field, form, type Html, layout, message, problem, SECURITY_HEADERS } from './pages-html.ts';
import { logFailure } from './log-failure.ts';

/** A form is a handful of short fields; anything bigger is not one of ours. */
const FORM_BODY_LIMIT = 16 * 1024;

/**
 * The two pages the account emails link to, served at the app address. Plain HTML forms that work without JavaScript:
 * GET shows the form, POST (application/x-www-form-urlencoded) hands it to the account service that the API uses, and
 * the answer is a redirect to a done page, or the form again with each error beside its field.
 */
export async function pagesPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;

  // Only this scope parses forms; a value holding NUL cannot be stored by PostgreSQL, so the form is refused whole.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, body, done) => {
    const fields = new URLSearchParams(body as string);
    for (const value of fields.values()) {
      if (value.includes('\u0000'))
        return done(Object.assign(new Error('The form holds a character that cannot be saved'), { statusCode: 400 }));
    }
    done(null, fields);
  });

  app.addHook('onSend', async (_req, reply) => {
    void reply.headers(SECURITY_HEADERS);
  });

  // The one error model decides the status (503 with Retry-After while the database is unreachable); people get HTML.
  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const pub = toPublicError(err);
    logFailure(req.log, err, pub, 'page failed');
    const detail =
      pub.status === 415
        ? 'Send the form from the page itself.'
        : pub.status === 413
          ? 'The form was too large.'
          : pub.status === 400
            ? err.message
            : 'Please try again in a moment.';
    void reply.headers({ ...pub.headers });
    return page(reply, pub.status, 'Something went wrong', problem('The form could not be handled.', detail));
  });

  const client = (req: FastifyRequest): Client => ({
    ip: req.ip,
    userAgent: req.headers['user-agent'],
    now: deps.clock.now(),
    wait: (ms) => deps.clock.sleep(ms),
  });

  registerFormPage(app, {
    path: 'reset-password',
    title: 'Choose a new password',
    prefix: RESET_PREFIX,
    badLink: 'This password reset link is incomplete. Open the link from your email again, or request a new one.',
    intro: 'Choose a new password for your Leadwire account. It ends every session and API key you have now.',
    submit: 'Set the new password',
    fields: [
      {
        name: 'newPassword',
        label: 'New password',
        type: 'password',
        autocomplete: 'new-password',
        required: true,
        hint: 'At least 8 characters.',
      },
      { name: 'confirmPassword', label: 'Repeat the new password', type: 'password', autocomplete: 'new-password', required: true },
    ],
    schema: ResetPasswordInput,
    input: (token, f) => ({ token, newPassword: f.get('newPassword') ?? '' }),
    passwordField: 'newPassword',
    run: (input, req) => resetPassword(deps.db, input, client(req)),
    done: {
      title: 'Your password is set',
      text: 'Your new password is set, and every earlier session and API key has ended.',
      detail: 'Sign in with your email and the new password.',
    },
  });

  registerFormPage(app, {
    path: 'accept-invite',
    title: 'Join your team on Leadwire',
    prefix: INVITE_PREFIX,
    badLink: 'This invitation link is incomplete. Open the link from your email again, or ask for a new invitation.',
    intro: 'Choose a password to accept the invitation. You sign in with the email address the invitation was sent to.',
    submit: 'Accept the invitation',
    fields: [
      { name: 'name', label: 'Your name (optional)', type: 'text', autocomplete: 'name', required: false },
      {
        name: 'password',
        label: 'Password',
        type: 'password',
        autocomplete: 'new-password',
        required: true,
        hint: 'At least 8 characters.',
      },
      { name: 'confirmPassword', label: 'Repeat the password', type: 'password', autocomplete: 'new-password', required: true },
    ],
    schema: AcceptInviteInput,
    input: (token, f) => ({ token, password: f.get('password') ?? '', ...(f.get('name')?.trim() ? { name: f.get('name')! } : {}) }),
    passwordField: 'password',
    // The service signs the invitee in for the API's sake; a page has nowhere to keep that session, so it just expires.
    run: async (input, req) => void (await acceptInvite(deps.db, input, client(req))),
    done: {
      title: 'Welcome to Leadwire',
      text: 'You have joined the organization.',
      detail: 'Sign in with the email address the invitation was sent to and the password you chose.',
    },
  });
}

interface FormPage<S extends z.ZodType> {
  path: string;
  title: string;
  /** The token's prefix: a link of the other kind (or none) is caught before anyone types a password. */
  prefix: string;
  badLink: string;
  intro: string;
  submit: string;
  fields: Field[];
  /** The operation's own input schema: the page adds no rule of its own but "type the password twice". */
  schema: S;
  input(token: string, fields: URLSearchParams): z.input<S>;
  passwordField: string;
  run(input: z.output<S>, req: FastifyRequest): Promise<void>;
  done: { title: string; text: string; detail: string };
}

function registerFormPage<S extends z.ZodType>(app: FastifyInstance, p: FormPage<S>) {
  const linkOk = (token: unknown): token is string => typeof token === 'string' && token.startsWith(p.prefix) && token.length <= 200;
  const badLink = (reply: FastifyReply) =>
    page(reply, 400, 'This link does not work', problem(p.badLink, 'Links work once, and only for a limited time.'));
  const show = (reply: FastifyReply, status: number, token: string, errors: Record<string, string>, fields?: URLSearchParams) =>
    page(
      reply,
      status,
      p.title,
      form({
        action: p.path,
        token,
        errors,
        intro: p.intro,
        submit: p.submit,
        fields: p.fields.map((f) => ({ ...f, value: fields?.get(f.name) ?? undefined })),
      }),
    );

  app.get(`/${p.path}`, async (req, reply) => {
    const { token } = req.query as { token?: unknown };
    return linkOk(token) ? show(reply, 200, token, {}) : badLink(reply);
  });

  app.post(`/${p.path}`, async (req, reply) => {
    if (!(req.body instanceof URLSearchParams)) throw Object.assign(new Error('Not a form'), { statusCode: 415 });
    const fields = req.body;
    const token = fields.get('token');
    if (!linkOk(token)) return badLink(reply);

    const errors: Record<string, string> = {};
    const parsed = p.schema.safeParse(p.input(token, fields));
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const name = String(issue.path[0] ?? '');
        if (name === 'token') return badLink(reply);
        errors[name] ??= issue.message;
      }
    }
    if (!errors[p.passwordField] && fields.get(p.passwordField) !== fields.get('confirmPassword')) {
      errors.confirmPassword = 'The two passwords are not the same';
    }
    if (!parsed.success || Object.keys(errors).length) return show(reply, 400, token, errors, fields);

    try {
      await p.run(parsed.data, req);
    } catch (err) {
      if (err instanceof AppError && err.status < 500) {
        return page(reply, err.status, 'This link does not work', problem(err.message, 'Nothing was changed.'));
      }
      throw err;
    }
    // Post/redirect/get: reloading the done page cannot submit the spent token again.
    return reply.redirect(`${p.path}/done`, 303);
  });

  app.get(`/${p.path}/done`, async (_req, reply) => page(reply, 200, p.done.title, message(p.done.text, p.done.detail)));
}

function page(reply: FastifyReply, status: number, title: string, body: Html) {
  return reply.status(status).type('text/html; charset=utf-8').send(layout(title, body));
}
