import { Migration } from '@mikro-orm/migrations';

export class Migration20261122012057 extends Migration {
  override name = 'Migration20261122012057';

  override up(): void | Promise<void> {
    this.addSql(
      `create unique index "messages_inbound_provider_id_unique" on "messages" ("organization_id", "provider_message_id") where "direction" = 'inbound' and "provider_message_id" is not null;`,
    );

    this.addSql(
      `create index "outbox_events_contact_idx" on "outbox_events" ("organization_id", (("payload"->'data'->'contact'->>'id')));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messages_inbound_provider_id_unique";`);

    this.addSql(`drop index "outbox_events_contact_idx";`);
  }
}
