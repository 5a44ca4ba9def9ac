import type { Deps } from '@leadwire/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type Asset, loadAsset, sendAsset } from './embed.ts';

/**
 * The integrations console (apps/console, built into apps/console/dist by `npm ci`, `npm start` and the test run):
 * one HTML page for every path under /app (history routing, so a link to /app/webhooks/<id> from an email opens that
 * screen), and its two assets under content-addressed names, cached for good. Read once when the server starts.
 */

export const CONSOLE_PATH = '/app';
const DIST = new URL('../../../console/dist/', import.meta.url);

/**
 * Only our own script and stylesheet run, the page talks only to its own origin, and no other site may frame it
 * (clickjacking the key and secret screens). Inline script and style are refused, so injected markup cannot run.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  // The page names the current assets, so it is never cached; they are cached for good under names that change.
  'cache-control': 'no-store',
};

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Console not built</title>
<h1>The console is not built on this server</h1><p>Run <code>npm run build:console</code> and restart the server.</p></html>`;

function page(js: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<link rel="icon" href="data:,">
<title>Leadwire</title>
<link rel="stylesheet" href="${CONSOLE_PATH}/assets/${css}">
<script type="module" src="${CONSOLE_PATH}/assets/${js}"></script>
</head>
<body>
<div id="console"></div>
<noscript>The Leadwire console needs JavaScript.</noscript>
</body>
</html>
`;
}

/** `console.js` as `console.<etag>.js`: a new build gets a new name, so the old one can be cached forever. */
const hashedName = (file: string, asset: Asset) => file.replace(/\.(\w+)$/, `.${asset.etag.slice(1, 13)}.$1`);

export async function consolePlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const js = loadAsset(new URL('console.js', DIST));
  const css = loadAsset(new URL('console.css', DIST));
  const assets = new Map<string, { asset: Asset; type: string }>();
  if (js && css) {
    assets.set(hashedName('console.js', js), { asset: js, type: 'text/javascript; charset=utf-8' });
    assets.set(hashedName('console.css', css), { asset: css, type: 'text/css; charset=utf-8' });
  } else {
    opts.deps.log.error({}, 'console not built: run `npm run build:console`');
  }
  const html = js && css ? page(hashedName('console.js', js), hashedName('console.css', css)) : null;

  const sendPage = (reply: FastifyReply) =>
    reply
      .status(html ? 200 : 503)
      .headers(PAGE_HEADERS)
      .send(html ?? NOT_BUILT);
  app.get(CONSOLE_PATH, async (_req, reply) => sendPage(reply));
  app.get(`${CONSOLE_PATH}/*`, async (_req, reply) => sendPage(reply));
  app.get<{ Params: { file: string } }>(`${CONSOLE_PATH}/assets/:file`, async (req, reply) => {
    const found = assets.get(req.params.file);
    if (!found)
      return reply.status(404).headers({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).send('Not found');
    void reply.headers({
      'content-type': found.type,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      'cross-origin-resource-policy': 'same-origin',
    });
    return sendAsset(req, reply, found.asset);
  });
}
