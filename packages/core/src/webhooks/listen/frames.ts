import { randomUUID } from 'node:crypto';
import { bodyOf } from '../delivery/dispatch.ts';
import { signDelivery } from '../transport/signing.ts';

/**
 * The Server-Sent Events of a listen stream (`text/event-stream`, UTF-8):
 * - `event: ready`, once, first: `{ secret, events, resumed }` (events null = every event; resumed null when no
 *   Last-Event-ID was sent, else whether every event after it could be replayed);
 * - `event: delivery` with `id: <event id>`: `{ event, headers, body }`, the exact headers and body string a webhook
 *   endpoint would receive, signed with the listen secret;
 * - `: keep-alive` comment lines in between;
 * - `event: end` `{ reason }` just before the server closes the stream (`server_shutdown`, `interrupted`, `too_slow`).
 */

/** What a delivery is made from: an event row of the outbox, or an example the trigger route announced. */
export interface ListenEvent {
  id: string;
  event: string;
  payload: Record<string, unknown>;
}

/** A frame: `data` is one line of JSON (JSON never contains a raw newline), so no field needs splitting. */
export const frame = (event: string, data: unknown, id?: string): string =>
  `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Tells EventSource-style clients to reconnect after 2 s, then the ready event. */
export const readyFrame = (data: { secret: string; events: readonly string[] | null; resumed: boolean | null }) =>
  `retry: 2000\n${frame('ready', data)}`;

export const HEARTBEAT = ': keep-alive\n\n';

/**
 * One delivery, exactly as the delivery engine builds it: the same body bytes (`bodyOf`) and the same signed headers
 * (`signDelivery`). `webhook-id` and the body's `id` are the event id, the same if the stream replays it after a reconnect.
 */
export function deliveryFrame(e: ListenEvent, secret: string, at: Date): string {
  // The row's id, whether or not the stored payload already holds it.
  const body = bodyOf({ ...e.payload, id: e.id });
  const headers = signDelivery({ body, secret, messageId: e.id, attemptId: randomUUID(), event: e.event, at });
  return frame('delivery', { event: e.event, headers, body }, e.id);
}
