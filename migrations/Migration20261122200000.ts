import { Migration } from '@mikro-orm/migrations';

export class Migration20261122200000 extends Migration {
  override name = 'Migration20261122200000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_endpoints" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "kind" text not null default 'endpoint', "url" text not null, "events" text[] not null default '{}', "description" text null, "enabled" boolean not null default true, "disabled_reason" text null, "failure_count" int not null default 0, "secret" text not null, "previous_secret" text null, "previous_secret_expires_at" timestamptz null, "created_by_id" uuid null, "api_key_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_endpoints_org_kind_idx" on "webhook_endpoints" ("organization_id", "kind");`);
    this.addSql(
      `create table "webhook_deliveries" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "endpoint_id" uuid not null, "event_id" uuid null, "event" text not null, "body" text not null, "state" text not null default 'pending', "attempts" int not null default 0, "manual" boolean not null default false, "replay_of" uuid null, "next_attempt_at" timestamptz null, "first_attempt_at" timestamptz null, "lease_token" uuid null, "worker_key" bigint null, "skip_reason" text null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_deliveries_endpoint_idx" on "webhook_deliveries" ("endpoint_id", "created_at");`);
    this.addSql(`create index "webhook_deliveries_org_created_idx" on "webhook_deliveries" ("organization_id", "created_at");`);
    this.addSql(
      `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "state" in ('pending', 'in_flight');`,
    );
    this.addSql(
      `create table "webhook_attempts" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "endpoint_id" uuid not null, "delivery_id" uuid not null, "event" text not null, "attempt" int not null, "outcome" text not null, "status_code" int null, "response_body" text null, "duration_ms" int null, "error" text null, "next_attempt_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_attempts_delivery_id_index" on "webhook_attempts" ("delivery_id");`);
    this.addSql(`create index "webhook_attempts_endpoint_idx" on "webhook_attempts" ("endpoint_id", "created_at");`);
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_created_by_id_foreign" foreign key ("created_by_id") references "users" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_kind_check" check ("kind" in ('endpoint', 'rest_hook'));`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'in_flight', 'succeeded', 'failed', 'skipped'));`,
    );
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_outcome_check" check ("outcome" in ('succeeded', 'failed', 'blocked', 'skipped'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhook_attempts" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);
  }
}
