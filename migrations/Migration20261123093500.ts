import { Migration } from '@mikro-orm/migrations';

export class Migration20261123093500 extends Migration {
  override name = 'Migration20261123093500';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "workflows" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "organization_id" uuid not null, "name" text not null, "trigger" text not null default 'webhook_received', "steps" jsonb not null default '[]', "enabled" boolean not null default true, "token_hash" text not null, "token_prefix" text not null, "created_by_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`alter table "workflows" add constraint "workflows_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "workflows_org_created_idx" on "workflows" ("organization_id", "created_at");`);
    this.addSql(
      `alter table "workflow_runs" add "workflow_id" uuid null, add "steps" jsonb not null default '[]', add "payload" jsonb not null default '{}', add "finished_at" timestamptz null;`,
    );
    this.addSql(
      `alter table "workflow_runs" add constraint "workflow_runs_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on delete set null;`,
    );
    this.addSql(`create index "workflow_runs_workflow_id_index" on "workflow_runs" ("workflow_id");`);
    this.addSql(
      `alter table "workflows" add constraint "workflows_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "workflows" add constraint "workflows_created_by_id_foreign" foreign key ("created_by_id") references "users" ("id") on delete set null;`,
    );
    this.addSql(`alter table "workflows" add constraint "workflows_trigger_check" check ("trigger" in ('webhook_received'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workflow_runs" drop constraint "workflow_runs_workflow_id_foreign";`);
    this.addSql(`drop index "workflow_runs_workflow_id_index";`);
    this.addSql(
      `alter table "workflow_runs" drop column "workflow_id", drop column "steps", drop column "payload", drop column "finished_at";`,
    );
    this.addSql(`drop table if exists "workflows" cascade;`);
  }
}
