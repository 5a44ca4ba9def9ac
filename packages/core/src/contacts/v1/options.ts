import type { Envelope } from '../../auth/envelope.ts';
import type { RequestContext } from '../../context.ts';
import { errors, issuesFromZod } from '../../errors.ts';
import { SourceSchema } from './schemas.ts';
import type { UpsertOptions } from './upsert.ts';
import { scoreAdjustmentHook } from '../shared/adjust-score-job.ts';

/** How a /v1 write upserts contacts. X-Source applies when the body carries no `source`: the body is the more specific of the two. */
export function upsertOptions(ctx: RequestContext & { envelope?: Envelope }): UpsertOptions {
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
    // The instant the request was counted at, when it was: the window and the write read one clock reading.
    now: ctx.envelope?.now ?? ctx.deps.clock.now(),
    envelope: ctx.envelope,
  };
}
