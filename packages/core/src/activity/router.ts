import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { Overview, OverviewInput } from './schemas.ts';
import { overview } from './service.ts';

const tags = ['Activity'];

/** `/api/activity/overview`: what the console's overview draws (issue 29). */
export const activityRouter = router({
  overview: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/activity/overview',
        tags,
        summary: "The workspace's activity: requests, deliveries, submissions and page views, limits in use, failing endpoints",
        description:
          'Counts per UTC hour (24h) or UTC day (7d, 30d) from hourly aggregates kept 32 days by default (ACTIVITY_RETENTION_DAYS). ' +
          'API requests are written by each server process every 10 seconds; deliveries, submissions and page views are rolled up every minute.',
      },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(OverviewInput)
    .output(Overview)
    .query(({ ctx, input }) => overview(ctx.deps, ctx.db, ctx.actor, input.period)),
});
