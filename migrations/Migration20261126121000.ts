import { Migration } from '@mikro-orm/migrations';

/**
 * An event is queued for dispatch only when an endpoint of its organization subscribes to it. Most events have none
 * (no endpoint, or not that type): until now each still wrote a queue row and its index entry, and a dispatch round
 * claimed it, deleted it and looked for its endpoints to find none, about 2.7 times per single upsert. The trigger now
 * asks that question when the event is written, with the test dispatch asks (TARGETS in dispatch.ts: an endpoint of
 * the organization, enabled or not, whose `events` lists the type), so what is queued is what has somewhere to go.
 * Consequence, documented: an endpoint receives the events written after it exists (subscribed to their type), judged
 * by the event's statement, never one written before it was created or subscribed.
 */
export class Migration20261126121000 extends Migration {
  override name = 'Migration20261126121000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function "outbox_events_outbox_events_pending_fn"() returns trigger language plpgsql as $$
begin
  insert into "outbox_pending" ("event_id", "created_at")
  select i."id", i."created_at" from "inserted" i
  where exists (
    select 1 from "webhook_endpoints" w where w."organization_id" = i."organization_id" and i."event" = any(w."events")
  );
  return null;
end
$$;`);
    // What is queued and has nowhere to go (endpoints gone or unsubscribed since) is claimed and dropped as before.
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace function "outbox_events_outbox_events_pending_fn"() returns trigger language plpgsql as $$
begin
  insert into "outbox_pending" ("event_id", "created_at") select i."id", i."created_at" from "inserted" i;
  return null;
end
$$;`);
  }
}
