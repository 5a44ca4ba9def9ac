import { statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { errors } from '../../errors.ts';
import { isoOrNull } from '../../records/dates.ts';
import { MAX_ATTEMPTS, RETRY_OFFSETS_MS } from './policy.ts';
import type { AttemptIdInput, DeliveryAttemptDetail } from './schemas.ts';
import { attemptLines, attemptView, requireEndpoint } from './service.ts';

/** One attempt of the log with what it sent (the delivery's body, its own URL and headers) and what came back. */
const ATTEMPT = statement<{ attemptId: string; endpointId: string; orgId: string }>()((p) =>
  attemptLines()
    .select(['a.url', 'a.request_headers', 'a.response_headers', 'd.event_id', 'd.body'])
    .where('a.id', '=', p.attemptId)
    .where('a.endpoint_id', '=', p.endpointId)
    .where('a.organization_id', '=', p.orgId),
);

type Row = NonNullable<(typeof ATTEMPT)['row']>;

const minutes = (ms: number) => (ms < 60_000 ? `${ms / 1000} s` : `${ms / 60_000} min`);

/** Why another attempt follows this one, or why none does: the retry rules of the spec, said for this attempt. */
export function nextAttemptWhy(r: Pick<Row, 'outcome' | 'attempt' | 'manual' | 'error' | 'next_attempt_at' | 'status_code'>): string {
  if (r.outcome === 'succeeded') return 'None: the receiver answered 2xx, so the delivery is done.';
  if (r.outcome === 'skipped') return `None: not sent (${r.error ?? 'skipped'}). Recover replays it once the cause is gone.`;
  if (r.outcome === 'blocked') return 'None: the address is refused (private or internal), so the endpoint was disabled.';
  const failure = r.status_code !== null ? `the receiver answered ${r.status_code}` : (r.error ?? 'no answer');
  if (r.manual) return `None: a test or a replay is attempted once (this one failed: ${failure}).`;
  if (r.next_attempt_at !== null) {
    const offset = RETRY_OFFSETS_MS[r.attempt - 1];
    return (
      `Attempt ${r.attempt + 1} of ${MAX_ATTEMPTS}, because this one failed (${failure}); it is due about ` +
      `${offset === undefined ? 'later' : minutes(offset)} after the first attempt, give or take 10%.`
    );
  }
  if (r.attempt >= MAX_ATTEMPTS) return `None: all ${MAX_ATTEMPTS} attempts failed. Redeliver or Recover sends it again.`;
  return 'None: the endpoint was disabled before another attempt was due. Enable it, then Recover.';
}

export async function getAttempt(db: Db, actor: InternalActor, input: AttemptIdInput): Promise<DeliveryAttemptDetail> {
  await requireEndpoint(db, actor, input.id);
  const [r] = await db.run(ATTEMPT, { attemptId: input.attemptId, endpointId: input.id, orgId: actor.orgId });
  if (!r) throw errors.notFound(`No attempt ${input.attemptId} in the delivery log of webhook endpoint ${input.id}`);
  return {
    ...attemptView(r),
    eventId: r.event_id,
    request: { method: 'POST', url: r.url, headers: r.request_headers, body: r.body },
    response: { statusCode: r.status_code, headers: r.response_headers, body: r.response_body },
    next: { at: isoOrNull(r.next_attempt_at), why: nextAttemptWhy(r) },
  };
}
