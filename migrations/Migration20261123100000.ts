import { Migration } from '@mikro-orm/migrations';

/**
 * `leadwire listen`: per-person listen secrets, the organizations being listened to, and a statement-level trigger on
 * the outbox that NOTIFYs the listening server processes of new events (ids only, chunks of 100 to stay far below
 * NOTIFY's 8,000-byte payload limit). With nobody listening the trigger costs one probe of an empty table per insert
 * statement and takes no notify lock.
 */
export class Migration20261123100000 extends Migration {
  override name = 'Migration20261123100000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_listeners" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "process_key" uuid not null, "expires_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "webhook_listeners" add constraint "webhook_listeners_org_process_unique" unique ("organization_id", "process_key");`,
    );
    this.addSql(
      `create table "webhook_listen_secrets" ("id" uuid not null default gen_random_uuid(), "created_at" timestamptz not null default now(), "organization_id" uuid not null, "user_id" uuid not null, "secret" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_listen_secrets_user_id_index" on "webhook_listen_secrets" ("user_id");`);
    this.addSql(
      `alter table "webhook_listen_secrets" add constraint "webhook_listen_secrets_org_user_unique" unique ("organization_id", "user_id");`,
    );
    this.addSql(
      `alter table "webhook_listeners" add constraint "webhook_listeners_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_listen_secrets" add constraint "webhook_listen_secrets_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_listen_secrets" add constraint "webhook_listen_secrets_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );
    this.addSql(`create function "outbox_events_outbox_events_listen_fn"() returns trigger language plpgsql as $$
declare
  r record;
  k int;
begin
  if not exists (select 1 from "webhook_listeners") then
    return null;
  end if;
  for r in
    select i."organization_id" as org, array_agg(i."id" order by i."created_at", i."id") as ids
    from "inserted" i
    where i."organization_id" in (select l."organization_id" from "webhook_listeners" l)
    group by i."organization_id"
  loop
    for k in 0 .. (cardinality(r.ids) - 1) / 100 loop
      perform pg_notify('leadwire_listen', json_build_object('o', r.org, 'ids', r.ids[k * 100 + 1 : k * 100 + 100])::text);
    end loop;
  end loop;
  return null;
end
$$;`);
    this.addSql(
      `create trigger "outbox_events_listen" after insert on "outbox_events" referencing new table as "inserted" for each statement execute function "outbox_events_outbox_events_listen_fn"();`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "outbox_events_listen" on "outbox_events";`);
    this.addSql(`drop function if exists "outbox_events_outbox_events_listen_fn"();`);
    this.addSql(`drop table if exists "webhook_listeners" cascade;`);
    this.addSql(`drop table if exists "webhook_listen_secrets" cascade;`);
  }
}
