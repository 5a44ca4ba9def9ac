import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 29: an attempt of the delivery log opens to what was sent and what came back. The body sent is the delivery's
 * own (`webhook_deliveries.body`, the exact bytes of every attempt); an attempt keeps the URL it went to and its
 * headers as sent (signatures included: they are not secrets, every receiver sees them), and the receiver's answer
 * headers (at most 50, each value cut at 512 characters, send.ts). Null for attempts logged before this migration.
 */
export class Migration20261129110000 extends Migration {
  override name = 'Migration20261129110000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "webhook_attempts" add column "url" text null, add column "request_headers" jsonb null, add column "response_headers" jsonb null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_attempts" drop column "url", drop column "request_headers", drop column "response_headers";`);
  }
}
