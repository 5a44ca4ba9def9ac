import type { RequestContext } from '../context.ts';
import { SourceSchema } from '../contacts/v1/schemas.ts';
import type { UpsertOptions } from '../contacts/v1/upsert.ts';
import { errors, issuesFromZod } from '../errors.ts';
import { scoreAdjustmentHook } from '../scoring/adjust-job.ts';

/** What the /v1 routers share, so that no router imports another. */

export const AUTH_ERRORS = ['unauthorized', 'wrong_api_surface', 'insufficient_scope', 'rate_limited'] as const;
export const WRITE_ERRORS = [...AUTH_ERRORS, 'validation_failed', 'idempotency_key_reused', 'idempotency_in_progress'] as const;

/** How a /v1 write upserts contacts. X-Source applies when the body carries no `source`: the body is the more specific of the two. */
export function upsertOptions(ctx: RequestContext): UpsertOptions {
  const header = ctx.header('x-source');
  if (header !== undefined) {
    const parsed = SourceSchema.safeParse(header);
    if (!parsed.success)
      throw errors.validation(
        issuesFromZod(parsed.error.issues).map((i) => ({ ...i, path: 'X-Source' })),
        `X-Source: ${parsed.error.issues[0]?.message}`,
      );
  }
  return {
    headerSource: header,
    eventSource: 'api',
    onScoreInputsChanged: scoreAdjustmentHook(ctx.deps, ctx.jobs),
    now: ctx.deps.clock.now(),
  };
}
