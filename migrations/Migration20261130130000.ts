import { Migration } from '@mikro-orm/migrations';

/**
 * Custom website events (issue 30): what `leadwire.track(name, props)` sends through the tracking snippet, kept like
 * page views (the same retention bounds), tied to the contact once the visitor is known.
 */
export class Migration20261130130000 extends Migration {
  override name = 'Migration20261130130000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "tracking_events" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid null, "visitor_id" text null, "name" text not null, "props" jsonb not null default '{}', "url" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "tracking_events_contact_idx" on "tracking_events" ("contact_id", "created_at");`);
    this.addSql(`create index "tracking_events_org_created_idx" on "tracking_events" ("organization_id", "created_at");`);
    this.addSql(
      `create index "tracking_events_anonymous_visitor_idx" on "tracking_events" ("organization_id", "visitor_id") where "contact_id" is null and "visitor_id" is not null;`,
    );
    this.addSql(`create index "tracking_events_created_brin" on "tracking_events" using brin ("created_at") with (autosummarize = on);`);
    this.addSql(
      `alter table "tracking_events" add constraint "tracking_events_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tracking_events" add constraint "tracking_events_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "tracking_events" cascade;`);
  }
}
