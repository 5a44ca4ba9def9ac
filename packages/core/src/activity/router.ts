import { internalProcedure } from '../auth/internal.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { Overview, OverviewInput, Website, WebsiteInput } from './schemas.ts';
import { overview } from './service.ts';
import { websiteAnalytics } from './website.ts';

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
  website: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/activity/website',
        tags,
        summary: "The website's analytics: visitors and page views over time, top pages, referrers, UTM values, identified visitors",
        description:
          "From the tracking snippet's page views (kept 395 days; anonymous ones 30). Buckets are UTC hours (24h) or UTC days (7d, 30d). " +
          'Visitors are browsers with the snippet cookie; views under Global Privacy Control or Do Not Track are counted without one.',
      },
      errorCodes: INTERNAL_ERRORS,
    })
    .input(WebsiteInput)
    .output(Website)
    .query(({ ctx, input }) => websiteAnalytics(ctx.db, ctx.actor, input, ctx.deps.clock.now())),
});
