/**
 * The webhook event catalogue's names by group, generated from the server's catalogue. Do not edit: run
 * `npm run sdk:generate` after changing the catalogue.
 */
export const EVENT_GROUPS = {
  "Contacts": [
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "contact.stage_changed",
    "contact.score_changed",
    "contact.tag_added",
    "contact.consent_changed"
  ],
  "Deals": [
    "deal.created",
    "deal.updated",
    "deal.won",
    "deal.lost",
    "deal.stage_changed"
  ],
  "Messages": [
    "message.sent",
    "message.received",
    "conversation.created"
  ],
  "Tasks": [
    "task.created",
    "task.completed"
  ],
  "Bookings": [
    "booking.created",
    "booking.cancelled"
  ],
  "Forms": [
    "form.submitted"
  ],
  "AI actions": [
    "ai_action.created",
    "ai_action.approved",
    "ai_action.rejected"
  ],
  "Tracking": [
    "tracking.email_opened",
    "tracking.link_clicked",
    "tracking.page_visited",
    "tracking.custom_event"
  ],
  "Nonprofit": [
    "nonprofit.verification_recorded",
    "nonprofit.activated"
  ],
  "Test": [
    "ping"
  ],
  "Webhooks": [
    "webhook.endpoint_disabled",
    "webhook.endpoint_enabled",
    "webhook.delivery_failed",
    "webhook.limit_reached"
  ]
} as const;

/** Every event name of the catalogue. */
export const EVENT_NAMES: readonly string[] = Object.values(EVENT_GROUPS).flat();
