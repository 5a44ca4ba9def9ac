/** Every event of the spec's catalogue ("Event names"), grouped as the spec groups them. */
export const EVENT_GROUPS = {
  Contacts: [
    'contact.created',
    'contact.updated',
    'contact.deleted',
    'contact.stage_changed',
    'contact.score_changed',
    'contact.tag_added',
    // Issue 30: a contact's consent for a purpose was granted or withdrawn (consent/service.ts).
    'contact.consent_changed',
  ],
  Deals: ['deal.created', 'deal.updated', 'deal.won', 'deal.lost', 'deal.stage_changed'],
  Messages: ['message.sent', 'message.received', 'conversation.created'],
  Tasks: ['task.created', 'task.completed'],
  Bookings: ['booking.created', 'booking.cancelled'],
  Forms: ['form.submitted'],
  'AI actions': ['ai_action.created', 'ai_action.approved', 'ai_action.rejected'],
  // tracking.custom_event (issue 30): leadwire.track() on a page with the tracking snippet, for a known visitor.
  Tracking: ['tracking.email_opened', 'tracking.link_clicked', 'tracking.page_visited', 'tracking.custom_event'],
  Nonprofit: ['nonprofit.verification_recorded', 'nonprofit.activated'],
  Test: ['ping'],
  // Issue 19: operational events about the workspace's own webhooks (groups/webhooks.ts), source `system`.
  Webhooks: ['webhook.endpoint_disabled', 'webhook.endpoint_enabled', 'webhook.delivery_failed', 'webhook.limit_reached'],
} as const;

export type EventName = (typeof EVENT_GROUPS)[keyof typeof EVENT_GROUPS][number];

export const EVENT_NAMES: readonly EventName[] = Object.values(EVENT_GROUPS).flat();

/**
 * Events about the delivery of events. Their own deliveries never cause more of them (no `webhook.delivery_failed` about
 * a `webhook.*` delivery) and never spend nor meet the hourly delivery limit, so an outage cannot feed on itself.
 */
export const OPERATIONAL_EVENTS = EVENT_GROUPS.Webhooks;
export type OperationalEvent = (typeof OPERATIONAL_EVENTS)[number];
export const isOperational = (event: string): boolean => (OPERATIONAL_EVENTS as readonly string[]).includes(event);

/** The spec's automation-platform triggers ("Automation-platform hooks"): the events a REST hook may subscribe to. */
export const AUTOMATION_TRIGGERS = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.stage_changed',
  'contact.tag_added',
  'deal.created',
  'deal.updated',
  'deal.won',
  'deal.lost',
  'deal.stage_changed',
  'task.created',
  'task.completed',
  'message.received',
  'form.submitted',
  'booking.created',
] as const satisfies readonly EventName[];
export type AutomationTrigger = (typeof AUTOMATION_TRIGGERS)[number];
