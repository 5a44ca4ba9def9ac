/**
 * `@leadwire/sdk`: the typed client of the Leadwire public API v1. Webhook verification is its own entry point,
 * `@leadwire/sdk/webhooks`, so that each is bundled only where it is used.
 */
export { createClient, DEFAULTS } from './client/index.ts';
export type { BatchProgress, BatchUpsertOptions, CallOptions, ClientOptions, LeadwireClient, Page, Paged } from './client/index.ts';
export { LeadwireError } from './client/errors.ts';
export type { LeadwireErrorInit } from './client/errors.ts';
export type {
  BatchRowFailure,
  BatchRowResult,
  BatchRowSuccess,
  CompanyRecord,
  CompanySearchQuery,
  CompanyUpsertInput,
  CompanyUpsertResult,
  Contact,
  ContactDetail,
  ContactRecord,
  ContactSearchQuery,
  ContactUpsertInput,
  ContactUpsertResult,
  EventListOptions,
  EventPage,
  FeedEvent,
  Issue,
  ListOptions,
  LeadInput,
  LeadResult,
  Note,
  NoteInput,
  Permission,
} from './client/types.ts';
