import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, type BrowserSession, type Config, type SessionCookie } from '@leadwire/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's session on typed RPC (/api/trpc only): a request sending `x-leadwire-session: cookie` gets its new
 * session as an HttpOnly cookie, with a readable CSRF cookie bound to it; later requests authenticate by the cookie
 * when they echo the CSRF value in `x-csrf-token` (double submit, which a foreign site cannot read to copy) and,
 * when the browser names an origin, come from ours. SameSite=Strict already keeps other sites' requests cookieless;
 * the header is the second lock, for browsers or same-site neighbours that would still send it.
 */
export const OPT_IN_HEADER = 'x-leadwire-session';
export const CSRF_HEADER = 'x-csrf-token';

/** Fixed, not secret: the session token is the secret; the label only keeps this digest from meaning anything else. */
const CSRF_LABEL = 'leadwire console csrf v1';

/** The CSRF value of a session: bound to it, and revealing nothing of the token. */
export const csrfOf = (token: string) => createHmac('sha256', CSRF_LABEL).update(token).digest('base64url');

interface CookieNames {
  session: string;
  csrf: string;
  /** `; Secure` behind HTTPS, nothing over plain http (local use), where a browser would drop a Secure cookie. */
  secure: string;
}

/** `__Host-` (Secure, Path=/, no Domain) behind HTTPS: a sibling subdomain cannot plant or shadow these cookies. */
function cookieNames(config: Pick<Config, 'APP_URL'>): CookieNames {
  const https = new URL(config.APP_URL).protocol === 'https:';
  const prefix = https ? '__Host-' : '';
  return { session: `${prefix}lw_session`, csrf: `${prefix}lw_csrf`, secure: https ? '; Secure' : '' };
}

/** The first value of each cookie in a `Cookie` header; malformed pairs are skipped, not refused. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of (header ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (name && !out.has(name)) out.set(name, pair.slice(eq + 1).trim());
  }
  return out;
}

const sameValue = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

function setCookies(reply: FastifyReply, names: CookieNames, token: string, csrf: string, expiry: string): void {
  const attributes = `; Path=/; SameSite=Strict${names.secure}; ${expiry}`;
  void reply.header('set-cookie', `${names.session}=${token}${attributes}; HttpOnly`);
  void reply.header('set-cookie', `${names.csrf}=${csrf}${attributes}`);
}

const clear = (reply: FastifyReply, names: CookieNames) =>
  setCookies(reply, names, '', '', 'Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT');

/** What typed RPC adds to a request's context: `browserSession` on opt-in, `sessionCookie` when one is sent. */
export function browserSessionContext(
  config: Pick<Config, 'APP_URL' | 'BASE_URL'>,
  req: FastifyRequest,
  reply: FastifyReply,
): { browserSession?: BrowserSession; sessionCookie?: SessionCookie } {
  const names = cookieNames(config);
  const out: { browserSession?: BrowserSession; sessionCookie?: SessionCookie } = {};
  if (req.headers[OPT_IN_HEADER] === 'cookie') {
    out.browserSession = {
      open: ({ token, expiresAt }) => setCookies(reply, names, token, csrfOf(token), `Expires=${new Date(expiresAt).toUTCString()}`),
      close: () => clear(reply, names),
    };
  }
  const token = parseCookies(req.headers.cookie).get(names.session);
  if (token) {
    out.sessionCookie = {
      token: () => (checkCsrf(config, req, token), token),
      ended: () => clear(reply, names),
    };
  }
  return out;
}

function checkCsrf(config: Pick<Config, 'APP_URL' | 'BASE_URL'>, req: FastifyRequest, token: string): void {
  const sent = req.headers[CSRF_HEADER];
  if (typeof sent !== 'string' || sent === '') {
    throw new AppError('csrf_failed', `A session cookie needs the ${CSRF_HEADER} header: send the value of the csrf cookie`);
  }
  if (!sameValue(sent, csrfOf(token))) {
    throw new AppError('csrf_failed', `The ${CSRF_HEADER} header does not match this session; reload the console`);
  }
  // The request's own origin counts too: the same server answers on every name it is reached by (127.0.0.1 as well as
  // the default APP_URL's localhost), and a page of another site cannot choose the Host its requests go to.
  const origin = req.headers.origin;
  const own = [new URL(config.APP_URL).origin, new URL(config.BASE_URL).origin, `${req.protocol}://${req.host}`];
  if (origin !== undefined && !own.includes(origin)) {
    throw new AppError('csrf_failed', 'A session cookie is honoured only from the console\u2019s own origin');
  }
}
