import { publicApiProcedure } from '../auth/procedures.ts';
import { AUTH_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import { FeedListInput, FeedListOutput } from './schemas.ts';
import { CONTACT_FEED_PERMISSION, FEED_PERMISSION, listFeed } from './service.ts';

const DESCRIPTION = [
  'Every event the workspace produced, in commit order, as its webhook carries it: delivered or not (beyond the hourly delivery cap, to a disabled endpoint, or subscribed by no one), deletes and merges included, kept as long as the events are. Use it to reconcile after missed deliveries, or as a polling trigger.',
  'Page with `nextCursor` while `hasMore` is true; then poll later with the last `nextCursor` (never null). The cursor never skips an event: a page stops before the oldest transaction still running, so an event whose transaction started earlier and commits later is still ahead of the cursor. A long-running transaction on the database therefore delays the feed (nothing after it is returned until it ends), but loses nothing.',
  'With `types`, a page looks at a bounded stretch of the feed (1,000 events by default): it can return fewer than `limit` events, or none, with `hasMore: true`. Keep calling while `hasMore` is true.',
  '`events:read` reads every event; `contacts:read` alone reads the contact events (`contact.*`), and naming other `types` with it answers 403 `insufficient_scope`.',
].join('\n\n');

export const eventsRouter = router({
  list: publicApiProcedure([FEED_PERMISSION, CONTACT_FEED_PERMISSION])
    .meta({
      openapi: {
        method: 'GET',
        path: '/events',
        tags: ['Events'],
        summary: 'List events in commit order (the changes feed)',
        description: DESCRIPTION,
      },
      errorCodes: [...AUTH_ERRORS, 'validation_failed', 'invalid_cursor'],
    })
    .input(FeedListInput)
    .output(FeedListOutput)
    .query(({ ctx, input }) => listFeed(ctx.db, ctx.actor, input, { window: ctx.deps.config.FEED_SCAN_WINDOW })),
});
