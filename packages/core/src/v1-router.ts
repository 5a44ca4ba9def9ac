import { companiesRouter } from './companies/router.ts';
import { consentsV1Router } from './consent/router.ts';
import { contactsRouter } from './contacts/v1/router.ts';
import { eventsRouter } from './feed/router.ts';
import { leadsRouter } from './leads/router.ts';
import { notesRouter } from './notes/router.ts';
import { router } from './trpc.ts';

/** The public REST API v1: every operation defined once, served under /api/v1 through trpc-to-openapi. */
export const v1Router = router({
  contacts: contactsRouter,
  consents: consentsV1Router,
  companies: companiesRouter,
  leads: leadsRouter,
  notes: notesRouter,
  events: eventsRouter,
});

export type V1Router = typeof v1Router;
