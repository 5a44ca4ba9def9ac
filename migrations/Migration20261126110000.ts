import { Migration } from '@mikro-orm/migrations';

/**
 * Retention (packages/core/src/jobs/retention.ts) deletes the rows of the growing tables by age. A BRIN index on
 * `created_at` finds them: these tables are written in time order, so a range summary of a few pages per table
 * serves the look-up, and an insert adds no B-tree entry (the request path's cost stays as it was). Without it each
 * hourly run would read the whole table to find nothing once the backlog is gone. `autosummarize` has autovacuum
 * summarize each range as it fills: a range not yet summarized is read whole by every look-up.
 */
const TABLES = ['outbox_events', 'page_views', 'webhook_deliveries', 'workflow_runs'] as const;

export class Migration20261126110000 extends Migration {
  override name = 'Migration20261126110000';

  override up(): void | Promise<void> {
    for (const t of TABLES) this.addSql(`create index "${t}_created_brin" on "${t}" using brin ("created_at") with (autosummarize = on);`);
  }

  override down(): void | Promise<void> {
    for (const t of TABLES) this.addSql(`drop index if exists "${t}_created_brin";`);
  }
}
