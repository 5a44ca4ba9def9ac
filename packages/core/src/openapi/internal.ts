import type { oas31 } from 'zod-openapi';
import type { RestRoute } from '../http/routes.ts';

/** One line per area of the application API, for the document's tag list (every operation carries one of these). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Account: 'Sign-up, sign-in and sessions, passwords, invitations and the users of the organization.',
  'API keys': 'Create, list and revoke Public and Internal API keys.',
  Contacts: 'The contacts of the organization: list, search, create, edit, trash and restore, merge.',
  Files: 'Files attached to records, such as contact photos.',
  Forms: 'Hosted and embedded lead-capture forms.',
  Messages: 'SMS to contacts, and the delivery callbacks of the SMS provider.',
  'AI actions': 'Actions suggested by the assistant, to accept or dismiss.',
  Bookings: 'Meetings booked with contacts.',
  Deals: 'Deals on pipelines.',
  Nonprofit: 'Settings of nonprofit organizations.',
  Pipelines: 'Pipelines and their stages.',
  Tasks: 'Tasks on contacts, assigned to users.',
  Tracking: 'Website tracking settings.',
  Webhooks: 'Webhook endpoints, their deliveries and the `leadwire listen` relay.',
  'Automation platforms':
    'REST hooks, polling triggers, searches, dropdown choices and actions for Zapier, Make and the like (an Internal key, also in `X-Api-Key`).',
  Workflows: 'Automations: workflows, their runs, and the intake URL that starts them.',
};

const AUTH_SENTENCE =
  'Authenticated by a session token or an Internal API key in `Authorization: Bearer`, or an Internal key in `X-Api-Key`; an Internal key is rate-limited by its plan and its answers carry the `x-ratelimit-*` headers.';
const KEYLESS_SENTENCE = 'Takes no credential (`security: []`): it is open, or checks a secret of its own as its description says.';

/**
 * The document-level tag list, with a description per tag, and a description on every operation: its summary, the
 * credential it takes and the roles it may need, read from its wiring and error codes.
 */
export function finishInternalDocument(
  doc: oas31.OpenAPIObject,
  routes: readonly RestRoute[],
  operationOf: (route: RestRoute) => oas31.OperationObject,
  authenticated: (route: RestRoute) => boolean,
): void {
  const used = new Set<string>();
  for (const route of routes) {
    const op = operationOf(route);
    for (const tag of op.tags ?? []) used.add(tag);
    const summary = op.summary ? `${op.summary.replace(/\.$/, '')}.` : undefined;
    const roles = route.errorCodes.includes('forbidden_role')
      ? 'Some roles may not: 403 `forbidden_role` names the roles that may.'
      : undefined;
    op.description = [op.description ?? summary, authenticated(route) ? AUTH_SENTENCE : KEYLESS_SENTENCE, roles]
      .filter(Boolean)
      .join('\n\n');
  }
  doc.tags = [...used].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Operations on ${name.toLowerCase()}.` }));
}
