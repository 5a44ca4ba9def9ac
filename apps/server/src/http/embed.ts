import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { AppError, type Logger } from '@leadwire/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The browser scripts websites embed, served from their build output (snippets/<name>/dist, built by `npm ci` and
 * `npm start`; see snippets/build.ts). Read once when the server starts. Cached for an hour by browsers and CDNs
 * (an updated snippet reaches every site within that), revalidated by ETag; gzipped when the client accepts it;
 * readable from any origin (`<script crossorigin>`, Subresource Integrity, pages with COEP).
 */

const ROOT = new URL('../../../../', import.meta.url);

export interface Asset {
  raw: Buffer;
  gzip: Buffer;
  etag: string;
}

/**
 * Each content's gzip, made once per process: compressing the console's script at level 9 is most of an app's asset
 * set-up, and a process that builds several apps (the tests, some hundred per run) serves the same files from each.
 */
const gzipped = new Map<string, Buffer>();

/** A built file read once, with its gzip and a strong ETag of its content; null when it has not been built. */
export function loadAsset(file: URL): Asset | null {
  try {
    const raw = readFileSync(file);
    const digest = createHash('sha256').update(raw).digest('base64url');
    let gzip = gzipped.get(digest);
    if (!gzip) gzipped.set(digest, (gzip = gzipSync(raw, { level: 9 })));
    return { raw, gzip, etag: `"${digest.slice(0, 27)}"` };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    return coding === 'gzip' && !params.some((p) => /^q=0(?:\.0*)?$/.test(p));
  });
}

const matches = (ifNoneMatch: string | undefined, etag: string) =>
  (ifNoneMatch ?? '').split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === etag || tag === '*';
  });

/** Serves `snippets/<pkg>/dist/<file>` at `path` in `app`'s scope. */
export function serveSnippet(app: FastifyInstance, path: string, pkg: string, file: string, log: Logger) {
  const asset = loadAsset(new URL(`snippets/${pkg}/dist/${file}`, ROOT));
  if (!asset) log.error({ pkg, file }, 'snippet not built: run `npm run build:snippets`');
  app.get(path, async (req, reply) => {
    if (!asset) throw new AppError('snippet_not_built', `${file} is not built on this server; run npm run build:snippets and restart`);
    void reply.headers({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=3600',
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    });
    return sendAsset(req, reply, asset);
  });
}

/** Answers with `asset` (headers already set by the caller): 304 when the client holds it, gzipped when accepted. */
export function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: Asset) {
  void reply.header('etag', asset.etag).header('vary', 'Accept-Encoding');
  if (matches(req.headers['if-none-match'], asset.etag)) return reply.status(304).send();
  if (!acceptsGzip(req.headers['accept-encoding'])) return reply.send(asset.raw);
  return reply.header('content-encoding', 'gzip').send(asset.gzip);
}
