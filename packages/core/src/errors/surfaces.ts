/*
 * The errors every procedure of a surface can answer with before its operation runs (authentication, scope, rate,
 * input, idempotency), for the contracts' error lists. Here, below every resource, so that a router of either surface
 * takes them from the floor rather than from another router or from the documents built above them all.
 */

/** Every procedure of /v1: its key, scope and rate checks. */
export const AUTH_ERRORS = ['unauthorized', 'wrong_api_surface', 'insufficient_scope', 'rate_limited'] as const;
/** Writes of /v1: as above, plus the body's rules and `Idempotency-Key` replay. */
export const WRITE_ERRORS = [...AUTH_ERRORS, 'validation_failed', 'idempotency_key_reused', 'idempotency_in_progress'] as const;

/** Mutations of the internal surface: the errors any of them can answer with, for the contract. */
export const INTERNAL_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited', 'validation_failed'] as const;
