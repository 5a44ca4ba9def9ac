import { me } from './accounts/me.ts';
import { activityRouter } from './activity/router.ts';
import { accountsRouter } from './accounts/router.ts';
import { apiKeysRouter } from './api-keys/router.ts';
import { appCompaniesRouter } from './companies/app-router.ts';
import { appContactsRouter } from './contacts/app/router.ts';
import { consentsRouter } from './consent/router.ts';
import { filesRouter } from './files/router.ts';
import { formsRouter } from './forms/router.ts';
import { messagesRouter } from './messages/router.ts';
import { aiActionsRouter } from './ai-actions/router.ts';
import { bookingsRouter } from './bookings/router.ts';
import { dealsRouter } from './deals/router.ts';
import { nonprofitRouter } from './nonprofit/router.ts';
import { pipelinesRouter } from './pipelines/router.ts';
import { tasksRouter } from './tasks/router.ts';
import { trackingRouter } from './tracking/router.ts';
import { automationRouter } from './automation/router.ts';
import { router } from './trpc.ts';
import { webhooksRouter } from './webhooks/router.ts';
import { workflowsRouter } from './workflows/router.ts';

/**
 * The application surface: typed tRPC for internal frontends at /api/trpc, and the same procedures as REST under
 * /api (described at /api/docs/json). Sessions and Internal keys reach it; Public API keys do not.
 */
export const internalRouter = router({
  accounts: accountsRouter,
  activity: activityRouter,
  apiKeys: apiKeysRouter,
  companies: appCompaniesRouter,
  contacts: appContactsRouter,
  consents: consentsRouter,
  files: filesRouter,
  forms: formsRouter,
  messages: messagesRouter,
  me,
  aiActions: aiActionsRouter,
  bookings: bookingsRouter,
  deals: dealsRouter,
  nonprofit: nonprofitRouter,
  pipelines: pipelinesRouter,
  tasks: tasksRouter,
  tracking: trackingRouter,
  webhooks: webhooksRouter,
  automation: automationRouter,
  workflows: workflowsRouter,
});

export type InternalRouter = typeof internalRouter;
