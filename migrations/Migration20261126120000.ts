import { Migration } from '@mikro-orm/migrations';

/**
 * The dispatch queue with one index instead of two. Every event inserts its `outbox_pending` row into two B-trees (the
 * event id's primary key and the created_at index the dispatcher claims in) and deletes it again; on the single upsert
 * (about 2.7 events a request) that was 5.4 of the request's 27 index entries. Keyed by (created_at, event_id), the
 * primary key is the claim order itself, and what looked a row up by its event id (a contact's purge) has the
 * event's created_at beside its id.
 */
export class Migration20261126120000 extends Migration {
  override name = 'Migration20261126120000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "outbox_pending" drop constraint "outbox_pending_pkey";`);
    this.addSql(`drop index "outbox_pending_created_at_index";`);
    this.addSql(`alter table "outbox_pending" add constraint "outbox_pending_pkey" primary key ("created_at", "event_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "outbox_pending" drop constraint "outbox_pending_pkey";`);
    this.addSql(`alter table "outbox_pending" add constraint "outbox_pending_pkey" primary key ("event_id");`);
    this.addSql(`create index "outbox_pending_created_at_index" on "outbox_pending" ("created_at");`);
  }
}
