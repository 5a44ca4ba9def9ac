import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit counters are rewritten on every request and worthless after a crash (a window simply restarts), so they
 * skip the write-ahead log: counting a request then costs no WAL write and no flush at commit.
 */
export class Migration20261122010500 extends Migration {
  override name = 'Migration20261122010500';

  override up(): void | Promise<void> {
    this.addSql(`alter table "rate_limit_counters" set unlogged;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "rate_limit_counters" set logged;`);
  }
}
