import { z } from 'zod';
import { internalProcedure, requireRole } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { Goals, goals, GoalsInput } from './events.ts';
import { getSiteDomain, setSiteDomain } from './links.ts';
import { websiteSnippets } from './snippets.ts';
import { TrackingSettings, TrackingSettingsInput, WebsiteSnippets } from './schemas.ts';

const tags = ['Tracking'];

/**
 * `/api/tracking/settings`: the organization's site domain for link tracking. The snippet's own addresses
 * (`/api/embed/tracking.js`, `/api/track/pageview`, `/api/t/l/<token>`) need no key and are plain HTTP routes
 * (apps/server/src/http/tracking.ts).
 */
export const trackingRouter = router({
  snippets: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/tracking/snippets',
        tags,
        summary: "The tracking and lead-capture snippets, filled with the workspace id and this server's address",
      },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(z.void())
    .output(WebsiteSnippets)
    .query(({ ctx }) => websiteSnippets(ctx.deps.config.BASE_URL, ctx.actor.orgId)),
  goals: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/tracking/goals',
        tags,
        summary: "The website's goals: custom events (`leadwire.track`) of the last days by name, anonymous ones counted apart",
      },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(GoalsInput)
    .output(Goals)
    .query(({ ctx, input }) => goals(ctx.db, ctx.actor.orgId, ctx.deps.clock.now(), input)),
  settings: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/tracking/settings', tags, summary: 'Tracking settings of the organization' },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(z.void())
    .output(TrackingSettings)
    .query(({ ctx }) => getSiteDomain(ctx.db, ctx.actor.orgId)),
  updateSettings: internalProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/tracking/settings',
        tags,
        summary: 'Set the site domain whose links are tracked (owner or admin)',
      },
      errorCodes: [...INTERNAL_ERRORS, 'forbidden_role'],
    })
    .input(TrackingSettingsInput)
    .output(TrackingSettings)
    .mutation(({ ctx, input }) => {
      requireRole(ctx.actor, 'owner', 'admin');
      return setSiteDomain(ctx.db, ctx.actor.orgId, input.siteDomain);
    }),
});
