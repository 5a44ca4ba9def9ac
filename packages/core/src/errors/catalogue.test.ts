import { describe, expect, it } from 'vitest';
import { conflict } from '../conflict.ts';
import { AppError, ERROR_CATALOGUE, ERROR_CODES, errors, toPublicError } from '../errors.ts';
import type { LeadwireMeta } from '../trpc.ts';

describe('the error catalogue', () => {
  it('gives every error its status and default message from the one table', () => {
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      const entry = ERROR_CATALOGUE[code];
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.message.length, code).toBeGreaterThan(0);
    }
    expect(new AppError('not_in_trash').status).toBe(409);
    expect(toPublicError(new AppError('not_in_trash')).body).toEqual({ error: 'The record is not in trash', code: 'not_in_trash' });
    expect(toPublicError(new AppError('invalid_stage_order', undefined, { stageIds: ['a'] })).body).toEqual({
      error: 'stageIds must list every stage of the pipeline exactly once',
      code: 'invalid_stage_order',
      stageIds: ['a'],
    });
    expect(errors.tooManyConnections().status).toBe(429);
    expect(errors.requestTimeout().status).toBe(408);
  });

  it('keeps every helper at the status the contract documents', () => {
    // The statuses clients see; none changed when the codes moved into the catalogue.
    const seen = {
      unauthorized: errors.unauthorized().status,
      wrong_api_surface: errors.wrongSurface('x').status,
      insufficient_scope: errors.insufficientScope('contacts:read').status,
      validation_failed: errors.validation([]).status,
      missing_identity: errors.missingIdentity().status,
      rate_limited: errors.rateLimited(1).status,
      contact_limit_reached: errors.contactLimitReached().status,
      company_not_found: errors.companyNotFound('example.com').status,
      idempotency_key_reused: errors.idempotencyConflict().status,
      idempotency_in_progress: errors.idempotencyInProgress().status,
      save_failed: errors.saveFailed(new Error('x')).status,
      service_unavailable: errors.serviceUnavailable().status,
      malformed_url: errors.malformedUrl().status,
      bad_request: errors.badHttpRequest().status,
      headers_too_large: errors.headersTooLarge().status,
    };
    expect(seen).toEqual({
      unauthorized: 401,
      wrong_api_surface: 403,
      insufficient_scope: 403,
      validation_failed: 400,
      missing_identity: 400,
      rate_limited: 429,
      contact_limit_reached: 403,
      company_not_found: 422,
      idempotency_key_reused: 409,
      idempotency_in_progress: 409,
      save_failed: 500,
      service_unavailable: 503,
      malformed_url: 400,
      bad_request: 400,
      headers_too_large: 431,
    });
  });

  it('lets the compiler refuse a code outside the catalogue (checked by tsc -p tsconfig.json, which compiles this file)', () => {
    // Never run: each line below must fail the type check, or tsc reports the unused @ts-expect-error.
    const mistakes = () => [
      // @ts-expect-error a code outside the catalogue
      new AppError('no_such_code'),
      // @ts-expect-error a misspelt code
      new AppError('not_foud', 'x'),
      // @ts-expect-error details for a code that takes none
      new AppError('not_in_trash', undefined, { id: 'x' }),
      // @ts-expect-error required details left out
      new AppError('invalid_stage_order'),
      // @ts-expect-error a 409 helper given a 422 code
      conflict('invalid_stage_order', 'x', { stageIds: [] }),
      // @ts-expect-error the old (status, code) order
      new AppError(404, 'not_found'),
    ];
    // @ts-expect-error an operation's documented codes come from the catalogue too
    const meta: LeadwireMeta = { errorCodes: ['pipeline_name_taekn'] };
    expect(typeof mistakes).toBe('function');
    expect(meta.errorCodes).toHaveLength(1);
  });
});
