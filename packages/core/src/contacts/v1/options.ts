import type { Db } from '@leadwire/db';
import type { Envelope } from '../../auth/envelope.ts';
import type { RequestContext } from '../../context.ts';
import { errors, issuesFromZod } from '../../errors.ts';
import type { EventSource } from '../../events/outbox.ts';
import { type ContactUpsertInput, SourceSchema } from './schemas.ts';
import { scoreAdjustmentHook } from '../shared/adjust-score-job.ts';

/** A row to upsert: the /v1 input, plus the score a form's or workflow's caller may set. */
export type UpsertRowInput = ContactUpsertInput & { score?: number | undefined };

export interface UpsertOptions {
  /** X-Source header value, used for new contacts whose row carries no source. */
  headerSource?: string | undefined;
  /** Who made the change, as written into the events. */
  eventSource: EventSource;
  /** Called inside the transaction with the contacts whose score inputs changed (e.g. to queue the AI adjustment). */
  onScoreInputsChanged?: (tx: Db, contactIds: string[]) => Promise<void>;
  /** The time of the write (from `deps.clock`): created_at, updated_at and the events' timestamps. */
  now: Date;
  /** A /v1 request's envelope (its key's confirmation, count and Idempotency-Key), for the write to fold in. */
  envelope?: Envelope | undefined;
}

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
