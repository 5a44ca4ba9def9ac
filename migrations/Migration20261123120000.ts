import { Migration } from '@mikro-orm/migrations';

/**
 * The contact counter leaves the organization's row. Every new contact bumped `organizations.contact_count`, while
 * every contact and outbox insert checks its foreign key with `for key share` on that same row: under concurrency each
 * such lock beside an uncommitted bump became a MultiXact, and the row a hot spot every write of the organization
 * queued on (pg_stat_statements: 0.10 ms per foreign-key check, 0.0085 ms once the counter moved). The counter gets a
 * row of its own; the organization row now only changes when the organization does.
 */
export class Migration20261123120000 extends Migration {
  override name = 'Migration20261123120000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "contact_counters" ("organization_id" uuid not null, "contact_count" int not null default 0, primary key ("organization_id"));`,
    );
    this.addSql(
      `alter table "contact_counters" add constraint "contact_counters_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`insert into "contact_counters" ("organization_id", "contact_count") select "id", "contact_count" from "organizations";`);
    this.addSql(`alter table "organizations" drop column "contact_count";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "organizations" add column "contact_count" int not null default 0;`);
    this.addSql(
      `update "organizations" o set "contact_count" = c."contact_count" from "contact_counters" c where c."organization_id" = o."id";`,
    );
    this.addSql(`drop table if exists "contact_counters";`);
  }
}
