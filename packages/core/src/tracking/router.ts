import { z } from 'zod';
import { internalProcedure, requireRole } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../openapi/internal-errors.ts';
import { router } from '../trpc.ts';
import { getSiteDomain, setSiteDomain } from './links.ts';
import { TrackingSettings, TrackingSettingsInput } from './schemas.ts';

const tags = ['Tracking'];

/**
 * `/api/tracking/settings`: the organization's site domain for link tracking. The snippet's own addresses
 * (`/api/embed/tracking.js`, `/api/track/pageview`, `/api/t/l/<token>`) need no key and are plain HTTP routes
 * (apps/server/src/http/tracking.ts).
 */
export const trackingRouter = router({
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
