import { Migration } from '@mikro-orm/migrations';

/** Forms and their submissions (lead capture). */
export class Migration20261123090000 extends Migration {
  override name = 'Migration20261123090000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "forms" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "name" text not null, "fields" jsonb not null default '[]', "published" boolean not null default false, "pipeline_id" uuid null, "captcha_provider" text null, "captcha_site_key" text null, "captcha_secret" text null, "thank_you_message" text null, "redirect_url" text null, primary key ("id"));`,
    );
    this.addSql(`create index "forms_org_created_idx" on "forms" ("organization_id", "created_at");`);
    this.addSql(
      `create table "form_submissions" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "form_id" uuid null, "form_name" text not null, "contact_id" uuid null, "answers" jsonb not null default '{}', "attribution" jsonb not null default '{}', "pipeline_item_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "form_submissions_contact_idx" on "form_submissions" ("contact_id", "created_at");`);
    this.addSql(`create index "form_submissions_form_idx" on "form_submissions" ("form_id", "created_at");`);
    this.addSql(
      `alter table "forms" add constraint "forms_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "forms" add constraint "forms_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "forms" add constraint "forms_captcha_provider_check" check ("captcha_provider" in ('turnstile', 'hcaptcha', 'recaptcha'));`,
    );
    this.addSql(
      `alter table "form_submissions" add constraint "form_submissions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "form_submissions" add constraint "form_submissions_form_id_foreign" foreign key ("form_id") references "forms" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "form_submissions" add constraint "form_submissions_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "form_submissions" cascade;`);
    this.addSql(`drop table if exists "forms" cascade;`);
  }
}
