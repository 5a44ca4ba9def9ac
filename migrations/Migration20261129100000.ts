import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 29: the console's overview. `activity_hourly` holds per-workspace hourly counts (packages/db/src/entities/
 * activity.ts), rolled up from what is already recorded; its BRIN on `hour` serves the retention delete. The rollup
 * reads the last hours of form submissions by time across workspaces: a BRIN on `created_at` finds them, as the ones on
 * the delivery log and page views already do, for next to nothing on each insert.
 */
export class Migration20261129100000 extends Migration {
  override name = 'Migration20261129100000';

  override up(): void | Promise<void> {
    this.addSql(`create table "activity_hourly" (
  "organization_id" uuid not null,
  "series" text not null,
  "hour" timestamptz not null,
  "subject" text not null,
  "outcome" text not null,
  "count" int not null,
  constraint "activity_hourly_pkey" primary key ("organization_id", "series", "hour", "subject", "outcome"),
  constraint "activity_hourly_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade
);`);
    this.addSql(`create index "activity_hourly_hour_brin" on "activity_hourly" using brin ("hour") with (autosummarize = on);`);
    this.addSql(`create index "form_submissions_created_brin" on "form_submissions" using brin ("created_at") with (autosummarize = on);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "form_submissions_created_brin";`);
    this.addSql(`drop table "activity_hourly";`);
  }
}
