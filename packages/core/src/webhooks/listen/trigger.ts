import { randomUUID } from 'node:crypto';
import { type Db, LISTEN_CHANNEL } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { exampleFor } from '../../events/catalogue.ts';
import { bodyOf } from '../delivery/dispatch.ts';
import { queueOne, requireEndpoint } from '../delivery/service.ts';
import type { ListenEvent } from './frames.ts';
import type { TriggerInput, TriggerResult } from './schemas.ts';
import * as SQL from './sql.ts';

/** NOTIFY refuses payloads of 8,000 bytes or more; the catalogue's examples are well under 1 KB. */
const NOTIFY_MAX_BYTES = 7_900;

/**
 * `leadwire trigger`: the catalogue's example of an event, stamped with the current time (so receivers that
 * de-duplicate on event, timestamp and record do not drop a second trigger), announced to the organization's listen
 * streams on every server process, never fanned out to its endpoints. With `endpointId` it also becomes one manual
 * delivery to that endpoint (the path of the test ping and of redeliver). The NOTIFY is transactional: it goes out
 * with the delivery's commit, or not at all. The answer says `synthetic: true`: the example's ids name no record.
 */
export async function triggerEvent(db: Db, actor: InternalActor, input: TriggerInput, now: Date): Promise<TriggerResult> {
  requireRole(actor, 'owner', 'admin');
  const id = randomUUID();
  // A fresh id as well as a fresh time: a receiver de-duplicating on `id` takes a second trigger as a new event.
  const payload = { ...exampleFor(input.event), id, timestamp: now.toISOString() };
  const example: ListenEvent = { id, event: input.event, payload };
  const message = JSON.stringify({ o: actor.orgId, x: example });
  if (Buffer.byteLength(message) > NOTIFY_MAX_BYTES) throw new Error(`example of ${input.event} too large to announce`);
  return db.transaction(async (tx) => {
    let delivery: TriggerResult['delivery'] = null;
    if (input.endpointId) {
      await requireEndpoint(tx, actor, input.endpointId);
      delivery = await queueOne(
        tx,
        {
          orgId: actor.orgId,
          endpointId: input.endpointId,
          eventId: null,
          event: input.event,
          body: bodyOf(payload),
          manual: true,
          replayOf: null,
          skipReason: null,
        },
        now,
      );
    }
    await tx.run(SQL.NOTIFY, { channel: LISTEN_CHANNEL, message });
    const [row] = await tx.run(SQL.ANY_LISTENER, { orgId: actor.orgId });
    return { id: example.id, event: input.event, payload, listening: row?.listening ?? false, delivery, synthetic: true };
  });
}
