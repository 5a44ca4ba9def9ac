/** Mutations of the internal surface: the errors any of them can answer with, for the contract. */
export const INTERNAL_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited', 'validation_failed'] as const;
