import { Migration } from '@mikro-orm/migrations';

/**
 * Delivery filters (issue 30): an endpoint may carry a filter on its events' `data` (webhooks/endpoints/filter.ts),
 * applied at dispatch. An event it filters out is recorded as a delivery in state `filtered`, with one log line of
 * outcome `filtered` (shown only when the log is asked for them): never sent, never counted toward the hourly limit,
 * never a gap, never recovered.
 */
export class Migration20261130120000 extends Migration {
  override name = 'Migration20261130120000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "filter" jsonb null;`);
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_state_check";`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'in_flight', 'succeeded', 'failed', 'skipped', 'filtered'));`,
    );
    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_outcome_check";`);
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_outcome_check" check ("outcome" in ('succeeded', 'failed', 'blocked', 'skipped', 'filtered'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "webhook_deliveries" where "state" = 'filtered';`);
    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_outcome_check";`);
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_outcome_check" check ("outcome" in ('succeeded', 'failed', 'blocked', 'skipped'));`,
    );
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_state_check";`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'in_flight', 'succeeded', 'failed', 'skipped'));`,
    );
    this.addSql(`alter table "webhook_endpoints" drop column "filter";`);
  }
}
