import type { oas31 } from 'zod-openapi';
import type { RestRoute } from '../http/routes.ts';

/*
 * One realistic input per operation: what the interactive reference shows and what its generated curl sends. Without
 * them the reference fills every string with "" and, run against an existing record, blanks it. Each is the whole
 * procedure input (path, query and body fields together) so a test can check it against the procedure's own schema;
 * `applyRequestExamples` splits it into parameter and body examples. Only fields that are safe to send are set: an
 * upsert example names fields it means to write, never a blank.
 */

const CONTACT = '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10';
const OTHER_CONTACT = '8d3f1c52-6a7b-4e19-b0c4-2f6e9a1d7b35';
const PIPELINE = 'b7e4d2a1-3c5f-4a86-9e0b-1d2c3f4a5b6c';
const STAGE = 'c1a2b3d4-e5f6-4708-9a1b-2c3d4e5f6a7b';
const STAGE_2 = 'd2b3c4e5-f6a7-4819-8b2c-3d4e5f6a7b8c';
const USER = 'e3c4d5f6-a7b8-4920-9c3d-4e5f6a7b8c9d';
const ORG = 'f4d5e6a7-b8c9-4a31-8d4e-5f6a7b8c9d0e';
const RECORD = 'a5e6f7b8-c9d0-4b42-9e5f-6a7b8c9d0e1f';
const COMPANY = 'c7a1e9d3-2b4f-4a6c-8e0d-5f3b1a7c9e24';
const PASSWORD = 'correct horse battery staple';

const ada = {
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  title: 'CTO',
  companyDomain: 'example.com',
  tags: ['vip'],
  custom: { plan: 'trial' },
};

export const V1_REQUEST_EXAMPLES: Record<string, Record<string, unknown>> = {
  'contacts.search': { email: 'ada@example.com' },
  'contacts.upsert': ada,
  'contacts.batchUpsert': {
    contacts: [ada, { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', source: 'webinar-2026' }],
  },
  'companies.upsert': { domain: 'https://www.example.com/about', name: 'Example Inc', industry: 'Software', size: '11-50' },
  'leads.create': {
    email: 'grace@example.com',
    firstName: 'Grace',
    lastName: 'Hopper',
    source: 'webinar-2026',
    score: 80,
    pipeline: 'Sales',
  },
  'notes.create': { id: CONTACT, body: 'Asked for a demo' },
  // The read side (issue 18): a sync resumes from the last updatedAt it saw.
  'contacts.list': { limit: 100, updatedSince: '2026-11-20T00:00:00Z' },
  'contacts.get': { id: CONTACT },
  'consents.ofContact': { id: CONTACT },
  'companies.list': { limit: 100, updatedSince: '2026-11-20T00:00:00Z' },
  'companies.get': { id: COMPANY },
  'companies.search': { domain: 'example.com' },
  // A cursor as GET /v1/events returns them (transaction 48213, event 907311): what a reconciling partner resumes from.
  'events.list': { after: 'MTo0ODIxMzo5MDczMTE', types: 'contact.created,contact.updated,contact.deleted', limit: 100 },
};

const page = { limit: 25 };

export const INTERNAL_REQUEST_EXAMPLES: Record<string, Record<string, unknown>> = {
  'accounts.signUp': { organizationName: 'Acme', email: 'owner@acme.example', password: PASSWORD, name: 'Ada Lovelace' },
  'accounts.signIn': { email: 'owner@acme.example', password: PASSWORD },
  'accounts.changePassword': { currentPassword: PASSWORD, newPassword: 'a new and longer passphrase' },
  'accounts.requestPasswordReset': { email: 'owner@acme.example' },
  'accounts.resetPassword': { token: 'rst_4kq9Xw2mZp7LrT8vN3bY6cH1dF5gJ0sA', newPassword: 'a new and longer passphrase' },
  'accounts.confirmPassword': { password: PASSWORD },
  'accounts.invite': { email: 'grace@acme.example', role: 'member' },
  'accounts.acceptInvite': { token: 'inv_7hG2kL9pQ4rS1tV6wX3yZ8aB5cD0eF', password: PASSWORD, name: 'Grace Hopper' },
  'accounts.changeRole': { userId: USER, role: 'admin' },
  'accounts.deactivate': { userId: USER },
  'accounts.reactivate': { userId: USER },
  'apiKeys.create': { name: 'Zapier', type: 'public', permissions: ['contacts:read', 'contacts:write'], expiresInDays: 365 },
  'apiKeys.revoke': { id: RECORD },
  'contacts.list': { ...page, stage: 'lead', tag: 'vip', sort: 'createdAt', order: 'desc' },
  'contacts.get': { id: CONTACT, timelineLimit: 50 },
  'consents.ofContact': { id: CONTACT },
  'contacts.timeline': { id: CONTACT, limit: 50 },
  'contacts.create': {
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: 'Lovelace',
    jobTitle: 'CTO',
    tags: ['vip'],
    source: 'manual',
    stage: 'lead',
  },
  'contacts.update': { id: CONTACT, jobTitle: 'Chief Technology Officer', custom: { plan: 'pro' } },
  'contacts.addTags': { id: CONTACT, tags: ['vip', 'newsletter'] },
  'contacts.removeTags': { id: CONTACT, tags: ['newsletter'] },
  'contacts.setStage': { id: CONTACT, stage: 'qualified' },
  'contacts.setScoreOverride': { id: CONTACT, score: 85 },
  'contacts.delete': { id: CONTACT },
  'contacts.trash': page,
  'contacts.restore': { id: CONTACT },
  'contacts.merge': { primaryId: CONTACT, secondaryIds: [OTHER_CONTACT] },
  'files.list': { id: CONTACT },
  'messages.send': { contactId: CONTACT, body: 'Hi Ada, does Tuesday at 10 work for the demo?' },
  'messages.list': { id: CONTACT, limit: 50 },
  'messages.inbound': {
    orgId: ORG,
    from: '+14155550123',
    to: '+15550000000',
    body: 'Tuesday works, thanks!',
    providerMessageId: 'SM2f9c1e7a',
  },
  'aiActions.list': { contactId: CONTACT, status: 'pending', ...page },
  'aiActions.get': { id: RECORD },
  'aiActions.create': {
    contactId: CONTACT,
    kind: 'send_sms',
    summary: 'Follow up: asked for pricing twice',
    payload: { body: 'Hi Ada, here is our pricing.' },
  },
  'aiActions.approve': { id: RECORD },
  'aiActions.reject': { id: RECORD, reason: 'Already called her today' },
  'bookings.list': { contactId: CONTACT, status: 'confirmed', ...page },
  'bookings.get': { id: RECORD },
  'bookings.create': { contactId: CONTACT, title: 'Product demo', startsAt: '2026-12-01T09:00:00Z', endsAt: '2026-12-01T09:30:00Z' },
  'bookings.cancel': { id: RECORD },
  'deals.list': { pipelineId: PIPELINE, status: 'open', ...page },
  'deals.get': { id: RECORD },
  'deals.create': { contactId: CONTACT, title: 'Website redesign', valueCents: 1_250_000, currency: 'EUR' },
  'deals.update': { id: RECORD, stageId: STAGE_2 },
  'nonprofit.recordVerification': {
    status: 'verified',
    registrationNumber: 'EIN 12-3456789',
    evidence: { registry: 'https://example.org/r/123' },
  },
  'pipelines.get': { id: PIPELINE },
  'pipelines.create': { name: 'Partnerships', stages: ['New', 'Qualified', 'Won'] },
  'pipelines.rename': { id: PIPELINE, name: 'Enterprise sales' },
  'pipelines.setDefault': { id: PIPELINE },
  'pipelines.delete': { id: PIPELINE },
  'pipelines.addStage': { id: PIPELINE, name: 'Negotiation', position: 2 },
  'pipelines.renameStage': { id: PIPELINE, stageId: STAGE, name: 'Qualified' },
  'pipelines.reorderStages': { id: PIPELINE, stageIds: [STAGE_2, STAGE] },
  'pipelines.removeStage': { id: PIPELINE, stageId: STAGE },
  'tasks.list': { contactId: CONTACT, status: 'open', ...page },
  'tasks.get': { id: RECORD },
  'tasks.create': { title: 'Call Ada about the demo', dueAt: '2026-12-01T09:00:00Z', contactId: CONTACT },
  'tasks.update': { id: RECORD, dueAt: '2026-12-02T09:00:00Z' },
  'tasks.complete': { id: RECORD },
  'tracking.goals': { days: 30 },
  'webhooks.list': page,
  'webhooks.get': { id: RECORD },
  'webhooks.create': {
    url: 'https://hooks.example.com/leadwire',
    events: ['contact.created', 'contact.updated', 'deal.won'],
    description: 'CRM sync',
    filter: { 'contact.tags': 'vip' },
  },
  'webhooks.update': { id: RECORD, events: ['contact.created', 'contact.stage_changed'] },
  'webhooks.previewFilter': {
    filter: { $or: [{ 'contact.leadScore': { $gte: 50 } }, { 'contact.tags': { $in: ['vip', 'partner'] } }] },
    events: ['contact.created', 'contact.updated'],
    limit: 20,
  },
  'webhooks.delete': { id: RECORD },
  'webhooks.enable': { id: RECORD },
  'webhooks.disable': { id: RECORD },
  'webhooks.rotateSecret': { id: RECORD },
  'automation.subscribe': { hookUrl: 'https://hooks.zapier.com/hooks/standard/1234567/abcdef/', triggerEvent: 'contact.created' },
  'automation.unsubscribe': { id: RECORD },
  'automation.samples': { event: 'contact.created' },
  'automation.run.create_contact': {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    phone: '+14155550123',
    company: 'example.com',
    source: 'zapier',
    tags: ['vip', 'webinar'],
  },
  'automation.run.update_contact': { email: 'ada@example.com', phone: '+14155550199' },
  'automation.run.create_deal': { contactId: CONTACT, pipelineId: PIPELINE },
  'automation.run.create_task': { title: 'Call Ada about the demo' },
  'automation.run.send_sms': { to: '+14155550123', body: 'Hi Ada, thanks for signing up!' },
  'automation.run.add_tag': { contactId: CONTACT, tags: ['webinar-2026'] },
  'automation.poll': { event: 'contact.created', limit: 100 },
  'automation.findContact': { email: 'ada@example.com' },
  'automation.dropdowns.companies': { after: 'example.com', limit: 100 },
  'webhooks.test': { id: RECORD },
  'webhooks.deliveries': { id: RECORD, outcome: 'failed', event: 'contact.created', ...page },
  'webhooks.attempt': { id: RECORD, attemptId: CONTACT },
  'webhooks.redeliver': { id: RECORD, deliveryId: '9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
  'webhooks.recover': { id: RECORD, since: '2026-11-20T00:00:00Z' },
  'webhooks.trigger': { event: 'contact.created', endpointId: RECORD },
  'forms.list': page,
  'forms.get': { id: RECORD },
  'forms.create': {
    name: 'Contact us',
    fields: [
      { id: 'email', label: 'Email', type: 'email', required: true },
      { id: 'firstName', label: 'First name', type: 'text', required: false },
      { id: 'topic', label: 'Topic', type: 'select', required: true, options: ['Demo', 'Pricing', 'Support'] },
      { id: 'message', label: 'Message', type: 'textarea', required: false },
    ],
    published: true,
    pipelineId: PIPELINE,
    captcha: { provider: 'turnstile', siteKey: '0x4AAAAAAAB3cD5eF7gH9iJ', secret: '0x4AAAAAAAB3cD5eF7gH9iJ_secret' },
    thankYou: { message: 'Thanks, we will reply within one working day.' },
  },
  'forms.update': { id: RECORD, published: false, thankYou: { redirectUrl: 'https://www.example.com/thanks' } },
  'forms.delete': { id: RECORD },
  'tracking.updateSettings': { siteDomain: 'https://www.example.com' },
  'activity.overview': { period: '7d' },
  'activity.website': { period: '30d', page: '/pricing' },
  // Issue 20 (console, forms part): a form's recent submissions.
  'forms.submissions': { id: RECORD, ...page },
  'workflows.list': page,
  'workflows.get': { id: RECORD },
  'workflows.create': {
    name: 'Webinar sign-ups',
    trigger: 'webhook_received',
    steps: [
      { action: 'add_tag', input: { tags: ['webinar-2026'] } },
      { action: 'create_task', input: { title: 'Call after the webinar' } },
      { action: 'create_deal', input: { pipelineId: PIPELINE } },
      { action: 'update_contact', input: { phone: '+14155550123' } },
      { action: 'send_sms', input: { body: 'Thanks for signing up! The link follows on the day.' } },
    ],
    enabled: true,
  },
  'workflows.update': { id: RECORD, enabled: false },
  'workflows.rotateToken': { id: RECORD },
  'workflows.delete': { id: RECORD },
  'workflows.runs': { id: RECORD, ...page },
  'workflows.run': { runId: RECORD },
  'workflows.intake': {
    token: 'wfh_3kQ9xZ7pL2mN8vR4tY6wB1cD5fG0hJ9kA2sE4uI7oP1',
    email: 'ada@example.com',
    firstName: 'Ada',
    webinar: 'Pipelines 101',
  },
  // Companies on the application surface (issue 18).
  'companies.list': { ...page, q: 'example' },
  'companies.get': { id: COMPANY },
  'companies.create': { domain: 'https://www.example.com/about', name: 'Example Inc', industry: 'Software', size: '11-50' },
};

/** The operations that take input: a path or query parameter, or a body. */
const takesInput = (op: oas31.OperationObject) =>
  op.requestBody !== undefined || (op.parameters ?? []).some((p) => 'in' in p && (p.in === 'path' || p.in === 'query'));

/**
 * Puts each route's example on its operation: parameters get their field, the body the rest. An operation that takes
 * input and has no example fails the build, so a new operation cannot ship with a reference that sends blanks.
 */
export function applyRequestExamples(
  operationOf: (route: RestRoute) => oas31.OperationObject,
  routes: readonly RestRoute[],
  examples: Record<string, Record<string, unknown>>,
) {
  for (const route of routes) {
    const op = operationOf(route);
    const example = examples[route.procedure];
    if (!example) {
      if (takesInput(op)) throw new Error(`OpenAPI: no request example for ${route.procedure}`);
      continue;
    }
    const body = { ...example };
    for (const p of op.parameters ?? []) {
      if (!('in' in p) || !(p.name in example)) continue;
      p.example = example[p.name];
      delete body[p.name];
    }
    const media = (op.requestBody as oas31.RequestBodyObject | undefined)?.content['application/json'];
    if (media) media.example = body;
  }
}
