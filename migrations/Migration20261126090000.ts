import { Migration } from '@mikro-orm/migrations';

/**
 * The changes feed (GET /v1/events): each event records the transaction that wrote it (`txid`, xid8) and its place
 * within that transaction (`seq`). Readers page by (txid, seq) and stop below the oldest transaction still running,
 * so a transaction that started earlier but commits later is never passed over. Events written before this migration
 * all take its own transaction id and are numbered in their written order. Every payload gains its event's id.
 */
export class Migration20261126090000 extends Migration {
  override name = 'Migration20261126090000';

  override up(): void | Promise<void> {
    this.addSql(`create sequence "outbox_events_seq_seq";`);
    this.addSql(`alter table "outbox_events" add column "txid" xid8 not null default pg_current_xact_id();`);
    this.addSql(`alter table "outbox_events" add column "seq" bigint null;`);
    this.addSql(
      `update "outbox_events" e set "seq" = o.n, "payload" = jsonb_build_object('id', e."id") || e."payload"
from (select "id", nextval('outbox_events_seq_seq') as n from (select "id" from "outbox_events" order by "created_at", "id") x) o where o."id" = e."id";`,
    );
    this.addSql(
      `alter table "outbox_events" alter column "seq" set default nextval('outbox_events_seq_seq'), alter column "seq" set not null;`,
    );
    this.addSql(`alter sequence "outbox_events_seq_seq" owned by "outbox_events"."seq";`);
    this.addSql(`create index "outbox_events_feed_idx" on "outbox_events" ("organization_id", "txid", "seq");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "outbox_events_feed_idx";`);
    this.addSql(`alter table "outbox_events" drop column "seq", drop column "txid";`);
    this.addSql(`update "outbox_events" set "payload" = "payload" - 'id';`);
  }
}
