import { Migration } from '@mikro-orm/migrations';

/**
 * The Standard Webhooks message id (`webhook-id`) outlives a delivery: a redelivery or recovery is a new delivery of the
 * same event to the same endpoint and keeps the id its original was sent with, so a receiver de-duplicating on it does
 * not process the event twice. Null means the delivery's own id (every delivery the dispatcher makes). Replays made
 * before this migration get their first original's id, following chains of replays of replays.
 */
export class Migration20261126043000 extends Migration {
  override name = 'Migration20261126043000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add column "message_id" uuid null;`);
    this.addSql(`
      with recursive chain (id, root) as (
        select r.id, o.id from webhook_deliveries r join webhook_deliveries o on o.id = r.replay_of where o.replay_of is null
        union all
        select r.id, c.root from webhook_deliveries r join chain c on r.replay_of = c.id
      )
      update "webhook_deliveries" d set "message_id" = c.root from chain c where c.id = d.id;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop column "message_id";`);
  }
}
