/**
 * The reads that may be served by a read replica: docs/scaling.md's list ("Reads that can go to a replica"), which
 * test/replicas/routes.test.ts holds this to, and each entry to a GET route that exists. Each is read-only and paged
 * or keyed so that a slightly old answer stays harmless. Nothing that writes, and no read that decides a write or a
 * refusal (authentication, idempotency, limits, the upserts' matching, intake, dispatch, jobs), is here: those run on
 * the primary.
 */
export const REPLICA_READS: ReadonlySet<string> = new Set([
  // The public API.
  'GET /api/v1/contacts',
  'GET /api/v1/contacts/search',
  'GET /api/v1/contacts/{id}',
  'GET /api/v1/companies',
  'GET /api/v1/companies/search',
  'GET /api/v1/companies/{id}',
  'GET /api/v1/events',
  // The application.
  'GET /api/contacts',
  'GET /api/contacts/{id}',
  'GET /api/contacts/{id}/timeline',
  'GET /api/contacts/{id}/messages',
  'GET /api/contacts/{id}/files',
  'GET /api/companies',
  'GET /api/companies/{id}',
  'GET /api/deals',
  'GET /api/tasks',
  'GET /api/bookings',
  'GET /api/trash/contacts',
  'GET /api/forms',
  'GET /api/workflows/{id}/runs',
  'GET /api/webhooks/{id}/deliveries',
  // Automation platforms.
  'GET /api/integrations/automation/triggers/{event}/poll',
  'GET /api/integrations/automation/contacts/find',
]);

/** The surfaces' REST prefixes, by the credential their procedures check (LeadwireMeta.auth). */
const PREFIX = { public: '/api/v1', internal: '/api' } as const;

/** The route a procedure answers as `METHOD /api/...`, from its meta; undefined for a procedure without REST. */
export function routeKeyOf(
  meta: { auth?: 'internal' | 'public'; openapi?: { method: string; path: string } } | undefined,
): string | undefined {
  if (!meta?.openapi || !meta.auth) return undefined;
  return `${meta.openapi.method} ${PREFIX[meta.auth]}${meta.openapi.path}`;
}
