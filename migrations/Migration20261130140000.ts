import { Migration } from '@mikro-orm/migrations';

/**
 * Consent with evidence and double opt-in (issue 30): a form's consent checkboxes, the append-only entries they
 * leave, and each organization's key for signing consent links and hashing addresses.
 */
export class Migration20261130140000 extends Migration {
  override name = 'Migration20261130140000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "forms" add column "consent" jsonb null;`);
    this.addSql(
      `create table "consent_entries" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "purpose" text not null, "status" text not null, "method" text not null, "text" text null, "version" text null, "form_id" uuid null, "form_name" text null, "page_url" text null, "ip_hash" text null, "expires_at" timestamptz null, "confirms" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "consent_entries_contact_idx" on "consent_entries" ("contact_id", "created_at");`);
    this.addSql(`alter table "consent_entries" add constraint "consent_entries_confirms_unique" unique ("confirms");`);
    this.addSql(
      `alter table "consent_entries" add constraint "consent_entries_status_check" check ("status" in ('granted', 'declined', 'pending', 'withdrawn'));`,
    );
    this.addSql(
      `alter table "consent_entries" add constraint "consent_entries_method_check" check ("method" in ('single_opt_in', 'double_opt_in', 'unsubscribe_link'));`,
    );
    this.addSql(
      `alter table "consent_entries" add constraint "consent_entries_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "consent_entries" add constraint "consent_entries_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "consent_entries" add constraint "consent_entries_form_id_foreign" foreign key ("form_id") references "forms" ("id") on delete set null;`,
    );
    this.addSql(
      `create table "consent_keys" ("organization_id" uuid not null, "key" text not null, "created_at" timestamptz not null default now(), primary key ("organization_id"));`,
    );
    this.addSql(
      `alter table "consent_keys" add constraint "consent_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "consent_keys" cascade;`);
    this.addSql(`drop table if exists "consent_entries" cascade;`);
    this.addSql(`alter table "forms" drop column "consent";`);
  }
}
