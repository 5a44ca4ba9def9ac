import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 19: each event keeps the id of the request that wrote it, so its deliveries (the delivery log, the worker's log
 * lines about its attempts) lead back to that request. Nullable, no default and no index: adding it rewrites no row.
 */
export class Migration20261126100000 extends Migration {
  override name = 'Migration20261126100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "outbox_events" add column "request_id" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "outbox_events" drop column "request_id";`);
  }
}
