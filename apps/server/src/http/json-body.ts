import type { FastifyInstance, FastifyRequest } from 'fastify';

/*
 * The one JSON body parser of every JSON surface (/api/v1, /api and /api/trpc). What it refuses, it refuses with a
 * framework code that toPublicError maps to `{ error, code }`: a body must be uncompressed UTF-8 JSON nested at most 64
 * levels. It is plain JSON.parse: keys such as `__proto__` become ordinary own properties (JSON.parse never sets a
 * prototype) and the schemas decide about them, so valid JSON is never called malformed.
 */

const MAX_JSON_DEPTH = 64;

/** `fatal`: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD and being stored as such. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

const bodyError = (code: string, statusCode: number) => Object.assign(new Error(code), { code, statusCode });

function nestingDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) max = depth;
    if (max > MAX_JSON_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return max;
}

/** Compression is not supported: a body must arrive as it is meant to be read. */
function unsupportedEncoding(req: FastifyRequest): boolean {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  return Boolean(encoding) && encoding !== 'identity';
}

/**
 * JSON is UTF-8 (RFC 8259 section 8.1). A declared charset other than UTF-8 would be read as something it is not, so it
 * is refused rather than guessed at; no charset, or utf-8 in any spelling, is what clients send.
 */
function foreignCharset(req: FastifyRequest): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  return charset !== undefined && charset !== 'utf-8' && charset !== 'utf8';
}

/**
 * Installs the parser for `application/json` in `app`'s scope. `empty` gives the value of an empty body for the
 * requests that may send none (a missing body is then a value, not an error); any other empty body is refused.
 */
export function addJsonBodyParser(app: FastifyInstance, opts: { empty?: (req: FastifyRequest) => { value: unknown } | undefined } = {}) {
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    if (unsupportedEncoding(req)) return done(bodyError('UNSUPPORTED_CONTENT_ENCODING', 415));
    if (foreignCharset(req)) return done(bodyError('UNSUPPORTED_CHARSET', 415));
    const bytes = body as Buffer;
    if (bytes.length === 0) {
      const empty = opts.empty?.(req);
      return empty ? done(null, empty.value) : done(bodyError('FST_ERR_CTP_EMPTY_JSON_BODY', 400));
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      return done(bodyError('INVALID_UTF8', 400));
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return done(bodyError('FST_ERR_CTP_INVALID_JSON_BODY', 400));
    }
    // Absurdly deep documents would otherwise overflow the stack further down and surface as a 500.
    if (nestingDepth(value) > MAX_JSON_DEPTH) return done(bodyError('JSON_TOO_DEEP', 400));
    done(null, value);
  });
}
