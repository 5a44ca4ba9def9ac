import { Migration } from '@mikro-orm/migrations';

export class Migration20261122005540 extends Migration {
  override name = 'Migration20261122005540';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "conversations" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "channel" text not null default 'sms', "last_message_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`alter table "conversations" add constraint "conversations_contact_channel_unique" unique ("contact_id", "channel");`);

    this.addSql(
      `create table "messages" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "conversation_id" uuid not null, "contact_id" uuid not null, "direction" text not null, "channel" text not null default 'sms', "from_address" text not null, "to_address" text not null, "body" text not null, "status" text not null, "provider_message_id" text null, primary key ("id"));`,
    );
    this.addSql(`create index "messages_conversation_id_index" on "messages" ("conversation_id");`);
    this.addSql(`create index "messages_contact_id_index" on "messages" ("contact_id");`);

    this.addSql(
      `create table "bookings" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "title" text null, "starts_at" timestamptz not null, "ends_at" timestamptz not null, "status" text not null default 'confirmed', "cancelled_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "bookings_contact_id_index" on "bookings" ("contact_id");`);

    this.addSql(
      `create table "deals" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "pipeline_id" uuid not null, "stage_id" uuid not null, "title" text not null, "value_cents" bigint null, "currency" text not null default 'USD', "status" text not null default 'open', "closed_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "deals_contact_id_index" on "deals" ("contact_id");`);

    this.addSql(
      `create table "sign_in_attempts" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "email" text not null, "ip" text not null, "succeeded" boolean not null, primary key ("id"));`,
    );
    this.addSql(`create index "sign_in_attempts_email_idx" on "sign_in_attempts" ("email", "created_at");`);
    this.addSql(`create index "sign_in_attempts_ip_idx" on "sign_in_attempts" ("ip", "created_at");`);

    this.addSql(
      `create table "tasks" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid null, "assignee_id" uuid null, "title" text not null, "due_at" timestamptz null, "completed_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "tasks_contact_id_index" on "tasks" ("contact_id");`);

    this.addSql(
      `create table "sessions" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "user_id" uuid not null, "token_hash" text not null, "user_epoch" int not null, "expires_at" timestamptz not null, "last_used_at" timestamptz null, "key_creation_unlocked_until" timestamptz null, "user_agent" text null, primary key ("id"));`,
    );
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "password_reset_tokens" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "user_id" uuid not null, "token_hash" text not null, "expires_at" timestamptz not null, "used_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "password_reset_tokens_user_id_index" on "password_reset_tokens" ("user_id");`);
    this.addSql(`alter table "password_reset_tokens" add constraint "password_reset_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "nonprofit_verifications" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "recorded_by_id" uuid null, "status" text not null, "registration_number" text null, "evidence" jsonb not null default '{}', primary key ("id"));`,
    );
    this.addSql(`create index "nonprofit_verifications_organization_id_index" on "nonprofit_verifications" ("organization_id");`);

    this.addSql(
      `create table "invites" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "invited_by_id" uuid not null, "email" text not null, "role" text not null, "token_hash" text not null, "expires_at" timestamptz not null, "accepted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`alter table "invites" add constraint "invites_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "contact_files" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "uploaded_by_id" uuid null, "kind" text not null, "filename" text not null, "content_type" text not null, "size" int not null, "sha256" text not null, "storage_key" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "contact_files_contact_id_index" on "contact_files" ("contact_id");`);

    this.addSql(
      `create table "ai_actions" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid not null, "kind" text not null, "summary" text not null, "payload" jsonb not null default '{}', "status" text not null default 'pending', "decided_by_id" uuid null, "decided_at" timestamptz null, "reason" text null, primary key ("id"));`,
    );
    this.addSql(`create index "ai_actions_contact_id_index" on "ai_actions" ("contact_id");`);

    this.addSql(
      `create table "workflow_runs" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "contact_id" uuid null, "workflow" text not null, "status" text not null default 'running', primary key ("id"));`,
    );
    this.addSql(`create index "workflow_runs_contact_id_index" on "workflow_runs" ("contact_id");`);

    this.addSql(`alter table "organizations" add "nonprofit_activated_at" timestamptz null;`);

    this.addSql(
      `alter table "conversations" add constraint "conversations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "conversations" add constraint "conversations_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "messages" add constraint "messages_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "messages" add constraint "messages_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "messages" add constraint "messages_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "messages" add constraint "messages_direction_check" check ("direction" in ('inbound', 'outbound'));`);
    this.addSql(
      `alter table "messages" add constraint "messages_status_check" check ("status" in ('queued', 'sent', 'failed', 'received'));`,
    );

    this.addSql(
      `alter table "bookings" add constraint "bookings_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "bookings" add constraint "bookings_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "bookings" add constraint "bookings_status_check" check ("status" in ('confirmed', 'cancelled'));`);

    this.addSql(
      `alter table "deals" add constraint "deals_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "deals" add constraint "deals_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "deals" add constraint "deals_pipeline_id_foreign" foreign key ("pipeline_id") references "pipelines" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "deals" add constraint "deals_stage_id_foreign" foreign key ("stage_id") references "pipeline_stages" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "deals" add constraint "deals_status_check" check ("status" in ('open', 'won', 'lost'));`);

    this.addSql(
      `alter table "tasks" add constraint "tasks_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tasks" add constraint "tasks_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tasks" add constraint "tasks_assignee_id_foreign" foreign key ("assignee_id") references "users" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "sessions" add constraint "sessions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "password_reset_tokens" add constraint "password_reset_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "nonprofit_verifications" add constraint "nonprofit_verifications_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "nonprofit_verifications" add constraint "nonprofit_verifications_recorded_by_id_foreign" foreign key ("recorded_by_id") references "users" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "nonprofit_verifications" add constraint "nonprofit_verifications_status_check" check ("status" in ('verified', 'rejected'));`,
    );

    this.addSql(
      `alter table "invites" add constraint "invites_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "invites" add constraint "invites_invited_by_id_foreign" foreign key ("invited_by_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "invites" add constraint "invites_role_check" check ("role" in ('admin', 'member'));`);

    this.addSql(
      `alter table "contact_files" add constraint "contact_files_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "contact_files" add constraint "contact_files_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "contact_files" add constraint "contact_files_uploaded_by_id_foreign" foreign key ("uploaded_by_id") references "users" ("id") on delete set null;`,
    );
    this.addSql(`alter table "contact_files" add constraint "contact_files_kind_check" check ("kind" in ('photo', 'file'));`);

    this.addSql(
      `alter table "ai_actions" add constraint "ai_actions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "ai_actions" add constraint "ai_actions_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "ai_actions" add constraint "ai_actions_decided_by_id_foreign" foreign key ("decided_by_id") references "users" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "ai_actions" add constraint "ai_actions_status_check" check ("status" in ('pending', 'approved', 'rejected'));`,
    );

    this.addSql(
      `alter table "workflow_runs" add constraint "workflow_runs_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "workflow_runs" add constraint "workflow_runs_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "messages" drop constraint "messages_conversation_id_foreign";`);

    this.addSql(`drop table if exists "conversations" cascade;`);
    this.addSql(`drop table if exists "messages" cascade;`);
    this.addSql(`drop table if exists "bookings" cascade;`);
    this.addSql(`drop table if exists "deals" cascade;`);
    this.addSql(`drop table if exists "sign_in_attempts" cascade;`);
    this.addSql(`drop table if exists "tasks" cascade;`);
    this.addSql(`drop table if exists "sessions" cascade;`);
    this.addSql(`drop table if exists "password_reset_tokens" cascade;`);
    this.addSql(`drop table if exists "nonprofit_verifications" cascade;`);
    this.addSql(`drop table if exists "invites" cascade;`);
    this.addSql(`drop table if exists "contact_files" cascade;`);
    this.addSql(`drop table if exists "ai_actions" cascade;`);
    this.addSql(`drop table if exists "workflow_runs" cascade;`);

    this.addSql(`alter table "organizations" drop column "nonprofit_activated_at";`);
  }
}
