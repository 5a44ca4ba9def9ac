import { Migration } from '@mikro-orm/migrations';

export class Migration20261123091000 extends Migration {
  override name = 'Migration20261123091000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "page_views" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid null, "visitor_id" text null, "url" text not null, "referrer" text null, "title" text null, primary key ("id"));`,
    );
    this.addSql(`create index "page_views_organization_id_index" on "page_views" ("organization_id");`);
    this.addSql(`create index "page_views_contact_idx" on "page_views" ("contact_id", "created_at");`);
    this.addSql(
      `create index "page_views_anonymous_visitor_idx" on "page_views" ("organization_id", "visitor_id") where "contact_id" is null and "visitor_id" is not null;`,
    );
    this.addSql(
      `create table "tracking_visitors" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "visitor_id" text not null, "contact_id" uuid not null, primary key ("id"));`,
    );
    this.addSql(`create index "tracking_visitors_contact_id_index" on "tracking_visitors" ("contact_id");`);
    this.addSql(
      `alter table "tracking_visitors" add constraint "tracking_visitors_org_visitor_unique" unique ("organization_id", "visitor_id");`,
    );
    this.addSql(
      `create table "tracked_links" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "message_id" uuid null, "token" text not null, "url" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "tracked_links_contact_id_index" on "tracked_links" ("contact_id");`);
    this.addSql(`alter table "tracked_links" add constraint "tracked_links_token_unique" unique ("token");`);
    this.addSql(`alter table "organizations" add "site_domain" text null;`);
    this.addSql(
      `alter table "page_views" add constraint "page_views_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "page_views" add constraint "page_views_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tracking_visitors" add constraint "tracking_visitors_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tracking_visitors" add constraint "tracking_visitors_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tracked_links" add constraint "tracked_links_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tracked_links" add constraint "tracked_links_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tracked_links" add constraint "tracked_links_message_id_foreign" foreign key ("message_id") references "messages" ("id") on delete set null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "tracked_links" cascade;`);
    this.addSql(`alter table "organizations" drop column "site_domain";`);
    this.addSql(`drop table if exists "tracking_visitors" cascade;`);
    this.addSql(`drop table if exists "page_views" cascade;`);
  }
}
