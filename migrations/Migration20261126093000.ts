import { Migration } from '@mikro-orm/migrations';

/**
 * Deliveries tell a receiver about a gap: an endpoint counts the events it missed (skipped over the hourly limit or
 * while disabled) and keeps the changes-feed place of the first one, until its next delivery carries them as `gap`.
 */
export class Migration20261126093000 extends Migration {
  override name = 'Migration20261126093000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "webhook_endpoints" add column "gap_skipped" int not null default 0, add column "gap_txid" xid8 null, add column "gap_seq" bigint null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" drop column "gap_skipped", drop column "gap_txid", drop column "gap_seq";`);
  }
}
