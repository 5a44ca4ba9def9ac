import { z } from 'zod';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import { IsoDateTime } from '../../validation/index.ts';
import { DeliveryFilterSchema, matchesFilter } from './filter.ts';
import { SUBSCRIBABLE_EVENTS } from './schemas.ts';
import { RECENT_EVENTS } from './sql.ts';

/**
 * "Test this filter against recent events": the workspace's newest events, each with whether the filter lets it
 * through, so an owner sees what an endpoint would receive before saving. Reads, changes nothing.
 */

/** Newest events looked at: the feed index read backwards, a bounded number of rows however rare the types asked for. */
export const PREVIEW_SCAN = 200;

export const FilterPreviewInput = z.object({
  filter: DeliveryFilterSchema.nullable().meta({ description: 'The filter to try (saved or not); null lets every event through.' }),
  events: z
    .array(z.enum(SUBSCRIBABLE_EVENTS, { message: `each event must be one of: ${SUBSCRIBABLE_EVENTS.join(', ')}` }))
    .max(SUBSCRIBABLE_EVENTS.length)
    .optional()
    .meta({ description: 'Only events of these names, as the endpoint subscribes; every subscribable event when omitted.' }),
  limit: z.number().int().min(1).max(50, 'limit must be at most 50').default(20).meta({ description: 'Events shown, 1-50 (default 20).' }),
});
export type FilterPreviewInput = z.infer<typeof FilterPreviewInput>;

export const FilterPreview = z.object({
  items: z.array(
    z.object({
      id: z.uuid(),
      event: z.string(),
      timestamp: IsoDateTime,
      matched: z.boolean().meta({ description: 'Whether an endpoint with this filter would receive it.' }),
      data: z.record(z.string(), z.unknown()).meta({ description: "The event's data, which the filter's paths read." }),
    }),
  ),
  matched: z.int().meta({ description: 'How many of the items the filter lets through.' }),
  scanned: z.int().meta({ description: `How many of the workspace's newest events were looked at (at most ${PREVIEW_SCAN}).` }),
});
export type FilterPreview = z.infer<typeof FilterPreview>;

export async function previewFilter(db: Db, actor: InternalActor, input: FilterPreviewInput): Promise<FilterPreview> {
  requireRole(actor, 'owner', 'admin');
  const wanted = new Set<string>(input.events ?? SUBSCRIBABLE_EVENTS);
  const rows = await db.run(RECENT_EVENTS, { orgId: actor.orgId, scan: PREVIEW_SCAN });
  const items = rows
    .filter((r) => wanted.has(r.event))
    .slice(0, input.limit)
    .map((r) => {
      const data = (r.payload.data ?? {}) as Record<string, unknown>;
      return {
        id: r.id,
        event: r.event,
        timestamp: String(r.payload.timestamp),
        matched: input.filter === null || matchesFilter(input.filter, data),
        data,
      };
    });
  return { items, matched: items.filter((i) => i.matched).length, scanned: rows.length };
}
