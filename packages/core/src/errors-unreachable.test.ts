import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { AppError, errors, isDatabaseUnreachable, toPublicError } from './errors.ts';

const pgError = (code: string, message = 'pg says no') => Object.assign(new Error(message), { code });

describe('a database outage is 503 service_unavailable, wherever it sits in the cause chain', () => {
  const outages: [string, Error][] = [
    ['ECONNREFUSED', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['an AggregateError of refused addresses', new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')], '')],
    ['SQLSTATE 08006', pgError('08006')],
    ['SQLSTATE 57P01 (terminated by an administrator)', pgError('57P01')],
    ['SQLSTATE 57P03 (starting up)', pgError('57P03')],
    ['a pool connect time-out', new Error('timeout exceeded when trying to connect')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
  ];

  it.each(outages)('%s', (_name, cause) => {
    expect(isDatabaseUnreachable(cause)).toBe(true);
    for (const wrapped of [cause, errors.saveFailed(cause), new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: errors.saveFailed(cause) })]) {
      const pub = toPublicError(wrapped);
      expect(pub).toEqual({ status: 503, body: { error: expect.any(String), code: 'service_unavailable' }, headers: { 'retry-after': '5' } });
    }
  });

  it('leaves other failures alone: statement errors stay 500, refusals of the request keep their status', () => {
    expect(toPublicError(errors.saveFailed(pgError('23505'))).body.code).toBe('save_failed');
    expect(toPublicError(pgError('42P01')).body.code).toBe('internal_error');
    expect(toPublicError(new AppError(409, 'conflict', 'no', {}, pgError('ECONNREFUSED'))).status).toBe(409);
    expect(isDatabaseUnreachable(new Error('syntax error at or near "x"'))).toBe(false);
    expect(isDatabaseUnreachable('ECONNREFUSED')).toBe(false);
  });

  it('a cause chain that loops does not hang', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(isDatabaseUnreachable(a)).toBe(false);
  });
});
