import { Migration } from '@mikro-orm/migrations';

export class Migration20261122001858 extends Migration {
  override name = 'Migration20261122001858';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "organizations" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "name" text not null, "plan" text not null default 'starter', "contact_booster" int not null default 0, "contact_count" int not null default 0, primary key ("id"));`,
    );
    this.addSql(`alter table "organizations" add constraint "organizations_plan_check" check ("plan" in ('starter', 'pro', 'max'));`);

    this.addSql(
      `create table "companies" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "domain" text not null, "name" text null, "industry" text null, "size" text null, "custom" jsonb not null default '{}', primary key ("id"));`,
    );
    this.addSql(`alter table "companies" add constraint "companies_org_domain_unique" unique ("organization_id", "domain");`);

    this.addSql(
      `create table "contacts" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "email" text null, "first_name" text null, "last_name" text null, "phone" text null, "job_title" text null, "website" text null, "linkedin" text null, "tags" text[] not null default '{}', "custom" jsonb not null default '{}', "source" text not null default 'api', "lead_score" int not null default 0, "score_adjustment" int not null default 0, "score_override" int null, "stage" text not null default 'lead', "company_id" uuid null, "email_consent" boolean not null default false, "sms_consent" boolean not null default false, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `create index "contacts_org_company_name_idx" on "contacts" ("organization_id", "company_id", lower("first_name"), lower("last_name"), "created_at") where "deleted_at" is null;`,
    );
    this.addSql(`create index "contacts_org_deleted_idx" on "contacts" ("organization_id", "deleted_at");`);
    this.addSql(
      `create unique index "contacts_org_email_live_unique" on "contacts" ("organization_id", "email") where "deleted_at" is null and "email" is not null;`,
    );

    this.addSql(
      `create table "outbox_events" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "event" text not null, "payload" jsonb not null, "dispatched_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "outbox_events_organization_id_index" on "outbox_events" ("organization_id");`);
    this.addSql(`create index "outbox_events_pending_idx" on "outbox_events" ("created_at") where "dispatched_at" is null;`);

    this.addSql(
      `create table "pipelines" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "name" text not null, "is_default" boolean not null default false, primary key ("id"));`,
    );
    this.addSql(`create unique index "pipelines_org_name_unique" on "pipelines" ("organization_id", lower("name"));`);
    this.addSql(`create unique index "pipelines_one_default" on "pipelines" ("organization_id") where "is_default";`);

    this.addSql(
      `create table "pipeline_stages" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "pipeline_id" uuid not null, "name" text not null, "position" int not null, primary key ("id"));`,
    );
    this.addSql(`alter table "pipeline_stages" add constraint "pipeline_stages_position_unique" unique ("pipeline_id", "position");`);

    this.addSql(
      `create table "pipeline_items" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "pipeline_id" uuid not null, "stage_id" uuid not null, "contact_id" uuid not null, primary key ("id"));`,
    );
    this.addSql(`create index "pipeline_items_contact_id_index" on "pipeline_items" ("contact_id");`);
    this.addSql(
      `alter table "pipeline_items" add constraint "pipeline_items_pipeline_contact_unique" unique ("pipeline_id", "contact_id");`,
    );

    this.addSql(
      `create table "rate_limit_counters" ("bucket" text not null, "window_start" timestamptz not null, "count" int not null, primary key ("bucket", "window_start"));`,
    );

    this.addSql(
      `create table "users" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "email" text not null, "name" text null, "password_hash" text not null, "role" text not null default 'member', "active" boolean not null default true, "credential_epoch" int not null default 0, primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`alter table "users" add constraint "users_role_check" check ("role" in ('owner', 'admin', 'member'));`);

    this.addSql(
      `create table "notes" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "author_id" uuid null, "body" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "notes_contact_id_index" on "notes" ("contact_id");`);

    this.addSql(
      `create table "api_keys" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "created_by_id" uuid not null, "name" text not null, "type" text not null, "permissions" text[] not null default '{}', "key_hash" text not null, "display_prefix" text not null, "owner_epoch" int not null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "last_used_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_type_check" check ("type" in ('public', 'internal'));`);

    this.addSql(
      `create table "idempotency_records" ("api_key_id" uuid not null, "key" text not null, "request_hash" text not null, "status" int null, "response" jsonb null, "created_at" timestamptz not null default now(), primary key ("api_key_id", "key"));`,
    );
    this.addSql(`create index "idempotency_records_created_at_index" on "idempotency_records" ("created_at");`);

    this.addSql(
      `alter table "companies" add constraint "companies_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "contacts" add constraint "contacts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "contacts" add constraint "contacts_company_id_foreign" foreign key ("company_id") references "companies" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "outbox_events" add constraint "outbox_events_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "pipelines" add constraint "pipelines_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "pipeline_stages" add constraint "pipeline_stages_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_stages" add constraint "pipeline_stages_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "pipeline_items" add constraint "pipeline_items_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_items" add constraint "pipeline_items_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_items" add constraint "pipeline_items_stage_id_foreign" foreign key ("stage_id") references "pipeline_stages" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "pipeline_items" add constraint "pipeline_items_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "users" add constraint "users_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "notes" add constraint "notes_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "notes" add constraint "notes_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "notes" add constraint "notes_author_id_foreign" foreign key ("author_id") references "users" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "api_keys" add constraint "api_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_created_by_id_foreign" foreign key ("created_by_id") references "users" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "idempotency_records" add constraint "idempotency_records_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on delete cascade;`,
    );
  }
}
