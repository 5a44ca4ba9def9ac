import { Migration } from '@mikro-orm/migrations';

/**
 * The dispatch queue leaves the outbox rows alone. Marking an event dispatched used to update its outbox row; the
 * pending index's predicate names `dispatched_at`, so that update could never be HOT: it copied the whole row (payload
 * included) and added an entry to each of the outbox's four indexes, for every event. Now an insert trigger queues
 * each event in `outbox_pending` (a small row) and the dispatcher deletes what it claims. The outbox's own
 * organization index goes too: `outbox_events_contact_idx` leads with the organization.
 */
export class Migration20261123110000 extends Migration {
  override name = 'Migration20261123110000';

  override up(): void | Promise<void> {
    this.addSql(`create table "outbox_pending" ("event_id" uuid not null, "created_at" timestamptz not null, primary key ("event_id"));`);
    this.addSql(`create index "outbox_pending_created_at_index" on "outbox_pending" ("created_at");`);
    this.addSql(
      `insert into "outbox_pending" ("event_id", "created_at") select "id", "created_at" from "outbox_events" where "dispatched_at" is null;`,
    );
    this.addSql(`create function "outbox_events_outbox_events_pending_fn"() returns trigger language plpgsql as $$
begin
  insert into "outbox_pending" ("event_id", "created_at") select i."id", i."created_at" from "inserted" i;
  return null;
end
$$;`);
    this.addSql(
      `create trigger "outbox_events_pending" after insert on "outbox_events" referencing new table as "inserted" for each statement execute function "outbox_events_outbox_events_pending_fn"();`,
    );
    this.addSql(`drop index "outbox_events_pending_idx";`);
    this.addSql(`drop index "outbox_events_organization_id_index";`);
    this.addSql(`alter table "outbox_events" drop column "dispatched_at";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "outbox_events" add column "dispatched_at" timestamptz null;`);
    this.addSql(`update "outbox_events" set "dispatched_at" = "created_at" where "id" not in (select "event_id" from "outbox_pending");`);
    this.addSql(`create index "outbox_events_pending_idx" on "outbox_events" ("created_at") where "dispatched_at" is null;`);
    this.addSql(`create index "outbox_events_organization_id_index" on "outbox_events" ("organization_id");`);
    this.addSql(`drop trigger if exists "outbox_events_pending" on "outbox_events";`);
    this.addSql(`drop function if exists "outbox_events_outbox_events_pending_fn"();`);
    this.addSql(`drop table if exists "outbox_pending";`);
  }
}
