import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { AppError, errors, isDatabaseFailure, isDatabaseUnreachable, toPublicError, writeFailure } from './errors.ts';

const pgError = (code: string, message = 'pg says no') => Object.assign(new Error(message), { code });

const unavailable = { status: 503, body: { error: expect.any(String), code: 'service_unavailable' }, headers: { 'retry-after': '5' } };

describe('a database outage is 503 service_unavailable, wherever it sits in the cause chain', () => {
  // No connection could be had: nothing was attempted, so even a write is 503.
  const noConnection: [string, Error][] = [
    ['ECONNREFUSED', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['an AggregateError of refused addresses', new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')], '')],
    ['SQLSTATE 57P03 (starting up)', pgError('57P03')],
    ['a pool connect time-out', new Error('timeout exceeded when trying to connect')],
    [
      'the executor finding no connection in time',
      Object.assign(new Error('No database connection could be had', { cause: new Error('timeout') }), {
        name: 'DatabaseUnavailableError',
      }),
    ],
  ];
  // The connection went away (or ran out of time) while a statement ran: a read is 503, a write was attempted and
  // rolled back, which is 500 save_failed (issue 16).
  const lostMidway: [string, Error][] = [
    ['SQLSTATE 08006', pgError('08006')],
    ['SQLSTATE 57P01 (terminated by an administrator)', pgError('57P01')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['statement_timeout', pgError('57014', 'canceling statement due to statement timeout')],
    ['lock_timeout', pgError('55P03', 'canceling statement due to lock timeout')],
    ['a frozen server given up on', Object.assign(new Error('PostgreSQL did not answer within 500 ms'), { name: 'DatabaseTimeoutError' })],
  ];

  it.each(noConnection)('%s', (_name, cause) => {
    expect(isDatabaseFailure(cause)).toBe(true);
    for (const wrapped of [
      cause,
      errors.saveFailed(cause),
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: errors.saveFailed(cause) }),
    ]) {
      expect(toPublicError(wrapped)).toEqual(unavailable);
    }
    // A contact write says what the spec says of a contact save that timed out, still 503 with retry-after: nothing
    // was attempted, so a retry will do. Other writes keep the generic words.
    expect(toPublicError(writeFailure(cause, 'contacts'))).toEqual({
      ...unavailable,
      body: { ...unavailable.body, error: 'Failed to save contact' },
    });
    expect(toPublicError(writeFailure(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause }), 'contacts')).body.error).toBe(
      'Failed to save contact',
    );
    expect(writeFailure(cause, 'companies')).toBeUndefined();
  });

  it.each(lostMidway)('%s', (_name, cause) => {
    expect(isDatabaseFailure(cause)).toBe(true);
    expect(toPublicError(cause)).toEqual(unavailable);
    expect(toPublicError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause }))).toEqual(unavailable);
    const saved = { status: 500, body: { error: 'Failed to save contact', code: 'save_failed' } };
    expect(toPublicError(errors.saveFailed(cause))).toEqual(saved);
    expect(toPublicError(writeFailure(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause }), 'contacts'))).toEqual(saved);
    expect(toPublicError(writeFailure(cause, 'companies')).body).toEqual({ error: 'Failed to save', code: 'save_failed' });
  });

  it('leaves a write answer already chosen alone', () => {
    expect(writeFailure(new AppError('idempotency_in_progress', 'busy', undefined, pgError('57014')), 'contacts')).toBeUndefined();
    expect(writeFailure(errors.saveFailed(pgError('57014')), 'companies')).toBeUndefined();
    expect(writeFailure(pgError('23505'), 'contacts')).toBeUndefined();
  });

  it('leaves other failures alone: statement errors stay 500, refusals of the request keep their status', () => {
    expect(toPublicError(errors.saveFailed(pgError('23505'))).body.code).toBe('save_failed');
    expect(toPublicError(pgError('42P01')).body.code).toBe('internal_error');
    expect(toPublicError(new AppError('email_taken', 'no', undefined, pgError('ECONNREFUSED'))).status).toBe(409);
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
