import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, errors, issuesFromZod, toPublicError } from './errors.ts';

/** A real ZodError, as a schema throws it. */
function zodError(schema: z.ZodType, value: unknown): Error {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected the value to fail');
  return result.error;
}

const withCode = (code: string, message = 'framework message', statusCode?: number) =>
  Object.assign(new Error(message), { code, ...(statusCode === undefined ? {} : { statusCode }) });

describe('toPublicError: our own errors', () => {
  it('maps every AppError factory to its status, code, message and details', () => {
    const cases: [AppError, number, string, Record<string, unknown>][] = [
      [errors.unauthorized(), 401, 'unauthorized', {}],
      [errors.wrongSurface('no'), 403, 'wrong_api_surface', {}],
      [errors.insufficientScope('notes:write'), 403, 'insufficient_scope', { required: 'notes:write' }],
      [errors.notFound('gone'), 404, 'not_found', {}],
      [errors.validation([{ path: 'a.b', message: 'bad' }]), 400, 'validation_failed', { issues: [{ path: 'a.b', message: 'bad' }] }],
      [errors.missingIdentity(), 400, 'missing_identity', {}],
      [errors.rateLimited(7), 429, 'rate_limited', {}],
      [errors.contactLimitReached(), 403, 'contact_limit_reached', {}],
      [errors.companyNotFound('acme.com'), 422, 'company_not_found', { domain: 'acme.com' }],
      [errors.idempotencyConflict(), 409, 'idempotency_key_reused', {}],
      [errors.idempotencyInProgress(), 409, 'idempotency_in_progress', {}],
      [errors.saveFailed(new Error('timeout')), 500, 'save_failed', {}],
    ];
    for (const [err, status, code, details] of cases) {
      const pub = toPublicError(err);
      expect(pub).toEqual({ status, body: { error: err.message, code, ...details } });
      expect(pub.body.error.length).toBeGreaterThan(0);
    }
  });

  it('names the permission in insufficient_scope and the wait in rate_limited', () => {
    expect(toPublicError(errors.insufficientScope('contacts:read')).body.error).toContain('contacts:read');
    expect(toPublicError(errors.rateLimited(42)).body.error).toContain('42');
  });

  it('uses the spec message for a failed save and never the cause', () => {
    const pub = toPublicError(errors.saveFailed(new Error('connection to 10.0.0.5 refused, password=hunter2')));
    expect(pub.body).toEqual({ error: 'Failed to save contact', code: 'save_failed' });
  });

  it('finds an AppError wrapped as the cause of other errors, tRPC ones included', () => {
    const inner = errors.notFound('No contact with id x');
    expect(toPublicError(new Error('outer', { cause: inner }))).toEqual(toPublicError(inner));
    const trpc = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: inner });
    expect(toPublicError(trpc)).toEqual({ status: 404, body: { error: 'No contact with id x', code: 'not_found' } });
  });

  it('prefers the outermost known error in a chain', () => {
    const outer = new AppError('email_taken', 'outer', undefined, errors.notFound('inner'));
    expect(toPublicError(outer).body.code).toBe('email_taken');
  });

  it('gives up on a very deep or circular cause chain with a 500 instead of looping', () => {
    let e: Error = errors.notFound('deep');
    for (let i = 0; i < 10; i++) e = new Error(`level ${i}`, { cause: e });
    expect(toPublicError(e).status).toBe(500);
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(toPublicError(a)).toEqual({ status: 500, body: { error: 'Internal server error', code: 'internal_error' } });
  });
});

describe('toPublicError: validation', () => {
  const Schema = z.object({ email: z.email(), tags: z.array(z.string().min(1)), nested: z.object({ n: z.number() }) });

  it('turns a ZodError into 400 validation_failed with dotted paths and the first problem in the message', () => {
    const pub = toPublicError(zodError(Schema, { email: 'x', tags: ['a', ''], nested: { n: 'one' } }));
    expect(pub.status).toBe(400);
    expect(pub.body.code).toBe('validation_failed');
    expect(pub.body.issues).toEqual([
      { path: 'email', message: expect.any(String) },
      { path: 'tags.1', message: expect.any(String) },
      { path: 'nested.n', message: expect.any(String) },
    ]);
    expect(pub.body.error).toMatch(/^Validation failed: email: /);
    expect(Object.keys(pub.body).sort()).toEqual(['code', 'error', 'issues']);
  });

  it('handles a root-level issue (empty path) without a dangling colon', () => {
    const pub = toPublicError(zodError(z.string(), 5));
    expect(pub.body.issues).toEqual([{ path: '', message: expect.any(String) }]);
    expect(pub.body.error).not.toMatch(/: :/);
    expect(pub.body.error).toMatch(/^Validation failed: [^:]/);
  });

  it('finds the ZodError tRPC wraps around bad input', () => {
    const trpc = new TRPCError({ code: 'BAD_REQUEST', cause: zodError(Schema, {}) });
    const pub = toPublicError(trpc);
    expect(pub.status).toBe(400);
    expect(pub.body.code).toBe('validation_failed');
    expect(JSON.stringify(pub.body)).not.toMatch(/TRPC|BAD_REQUEST/);
  });

  it('treats a response that fails its own output schema as a server fault (500), not the client\u2019s 400', () => {
    // What tRPC throws when a procedure's result does not match `.output()`: the client sent nothing wrong.
    const output = new TRPCError({
      code: 'INTERNAL_SERVER_ERROR',
      message: 'Output validation failed',
      cause: zodError(z.object({ leadScore: z.number().max(100) }), { leadScore: 150 }),
    });
    const pub = toPublicError(output);
    expect(pub.status).toBe(500);
    expect(pub.body).toEqual({ error: 'Internal server error', code: 'internal_error' });
  });

  it('converts zod paths with numbers and symbols to strings', () => {
    expect(issuesFromZod([{ path: ['a', 0, 'b'], message: 'm' }])).toEqual([{ path: 'a.0.b', message: 'm' }]);
    expect(issuesFromZod([{ path: [], message: 'm' }])).toEqual([{ path: '', message: 'm' }]);
    expect(issuesFromZod([{ path: [Symbol('s')], message: 'm' }])).toEqual([{ path: 'Symbol(s)', message: 'm' }]);
  });
});

describe('toPublicError: framework errors', () => {
  it('maps Fastify body errors by code, with our own messages', () => {
    const cases: [string, number, string][] = [
      ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'malformed_json'],
      ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 'malformed_json'],
      ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'payload_too_large'],
      ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'unsupported_media_type'],
      ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400, 'bad_request'],
    ];
    for (const [code, status, publicCode] of cases) {
      const pub = toPublicError(withCode(code, `Fastify internals: ${code}`, status));
      expect(pub.status).toBe(status);
      expect(pub.body.code).toBe(publicCode);
      expect(pub.body.error).not.toContain('FST_');
      expect(Object.keys(pub.body).sort()).toEqual(['code', 'error']);
    }
  });

  it('maps the tRPC/OpenAPI adapter errors by code', () => {
    const cases: [TRPCError['code'], number, string][] = [
      ['PARSE_ERROR', 400, 'malformed_json'],
      ['PAYLOAD_TOO_LARGE', 413, 'payload_too_large'],
      ['UNSUPPORTED_MEDIA_TYPE', 415, 'unsupported_media_type'],
      ['NOT_FOUND', 404, 'not_found'],
      ['METHOD_NOT_SUPPORTED', 405, 'method_not_allowed'],
    ];
    for (const [code, status, publicCode] of cases) {
      const pub = toPublicError(new TRPCError({ code, message: 'adapter message' }));
      expect(pub.status).toBe(status);
      expect(pub.body.code).toBe(publicCode);
      expect(JSON.stringify(pub.body)).not.toContain(code);
    }
  });

  it('keeps another 4xx status from the framework, with a generic body', () => {
    expect(toPublicError(withCode('FST_ERR_SOMETHING_NEW', 'internal detail', 431))).toEqual({
      status: 431,
      body: { error: 'Bad request', code: 'bad_request' },
    });
  });
});

describe('toPublicError: everything else', () => {
  it('is a 500 internal_error that reveals nothing of the original', () => {
    const secret = 'postgres://leadwire:hunter2@db/leadwire';
    const inputs: unknown[] = [
      new Error(secret),
      withCode('FST_ERR_SOMETHING', secret, 503),
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: secret }),
      new TypeError(secret),
      secret,
      undefined,
      null,
      42,
      { code: 'NOT_A_REAL_ERROR', message: secret },
    ];
    // An unreachable database is the one server failure with its own answer (see errors-unreachable.test.ts).
    expect(JSON.stringify(toPublicError(withCode('ECONNREFUSED', secret)))).not.toContain('hunter2');
    for (const input of inputs) {
      const pub = toPublicError(input);
      expect(pub).toEqual({ status: 500, body: { error: 'Internal server error', code: 'internal_error' } });
    }
  });

  it('never puts a stack trace into a body', () => {
    for (const err of [new Error('x'), errors.notFound('x'), withCode('FST_ERR_CTP_INVALID_JSON_BODY', 'x', 400)]) {
      expect(JSON.stringify(toPublicError(err).body)).not.toMatch(/stack|\bat .*:\d+/);
    }
  });
});

describe('stack traces', () => {
  it('a client error (4xx) captures none, a server error keeps its own, and errors made afterwards still get theirs', () => {
    const frames = (e: Error) => (e.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;
    expect(frames(errors.rateLimited(5))).toBe(0);
    expect(frames(errors.notFound('x'))).toBe(0);
    expect(frames(errors.saveFailed(new Error('db')))).toBeGreaterThan(0);
    expect(frames(new Error('after'))).toBeGreaterThan(0);
  });
});
