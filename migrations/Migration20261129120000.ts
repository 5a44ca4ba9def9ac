import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 29: "every event" is a wildcard stored as such (`events` = `*` followed by the catalogue's names, which each
 * start rewrites: endpoints/schemas.ts, storedEvents). Endpoints created before subscribed to "every event" by having
 * the whole catalogue of the day expanded into their list; an endpoint listing every one of these 31 names is taken to
 * mean every event, and becomes the wildcard, so the types added since reach it too. REST hooks keep their one event.
 */
const CATALOGUE_OF_NOVEMBER_2026 = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.stage_changed',
  'contact.score_changed',
  'contact.tag_added',
  'deal.created',
  'deal.updated',
  'deal.won',
  'deal.lost',
  'deal.stage_changed',
  'message.sent',
  'message.received',
  'conversation.created',
  'task.created',
  'task.completed',
  'booking.created',
  'booking.cancelled',
  'form.submitted',
  'ai_action.created',
  'ai_action.approved',
  'ai_action.rejected',
  'tracking.email_opened',
  'tracking.link_clicked',
  'tracking.page_visited',
  'nonprofit.verification_recorded',
  'nonprofit.activated',
  'webhook.endpoint_disabled',
  'webhook.endpoint_enabled',
  'webhook.delivery_failed',
  'webhook.limit_reached',
];

export class Migration20261129120000 extends Migration {
  override name = 'Migration20261129120000';

  override up(): void | Promise<void> {
    const names = CATALOGUE_OF_NOVEMBER_2026.map((n) => `'${n}'`).join(', ');
    this.addSql(
      `update "webhook_endpoints" set "events" = array['*'] || "events" where "kind" = 'endpoint' and "events"[1] <> '*' and "events" @> array[${names}]::text[];`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`update "webhook_endpoints" set "events" = "events"[2:] where "events"[1] = '*';`);
  }
}
