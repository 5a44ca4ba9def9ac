/** What every automation route's OpenAPI metadata shares. */
export const tags = ['Automation platforms'];
export const BASE = '/integrations/automation';
export const AUTH_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited'] as const;
export const INPUT_ERRORS = [...AUTH_ERRORS, 'validation_failed'] as const;
