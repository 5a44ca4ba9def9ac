import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Contact } from './contact.ts';
import { Message } from './crm.ts';
import { Organization } from './organization.ts';

/**
 * A page view sent by the tracking snippet. `createdAt` is when it was recorded (the server's clock). `visitorId` is
 * the snippet's cookie id, null for anonymous counts (Global Privacy Control or Do Not Track); `contact` is set when the
 * visitor is known, at once or later (identifyVisitor attaches a visitor's earlier views).
 */
export const PageViewSchema = defineEntity({
  name: 'PageView',
  tableName: 'page_views',
  indexes: [
    { name: 'page_views_contact_idx', properties: ['contact', 'createdAt'] },
    {
      // identifyVisitor finds a visitor's anonymous views through this.
      name: 'page_views_anonymous_visitor_idx',
      expression:
        'create index "page_views_anonymous_visitor_idx" on "page_views" ("organization_id", "visitor_id") where "contact_id" is null and "visitor_id" is not null',
    },
    // Retention's look-up by age (Migration20261126110000): a range summary, no B-tree entry per insert.
    {
      name: 'page_views_created_brin',
      expression: `create index "page_views_created_brin" on "page_views" using brin ("created_at") with (autosummarize = on)`,
    },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    contact: () => p.manyToOne(Contact).nullable().deleteRule('cascade'),
    visitorId: p.text().nullable(),
    url: p.text(),
    referrer: p.text().nullable(),
    title: p.text().nullable(),
  },
});
export class PageView extends PageViewSchema.class {}
PageViewSchema.setClass(PageView);

/**
 * A custom event a website sent through the tracking snippet (`leadwire.track(name, props)`). Like a page view:
 * `visitorId` null for anonymous counts (GPC or DNT), `contact` set when the visitor is known, at once or later
 * (identifyVisitor attaches a visitor's earlier events too). Anonymous ones count as goals (tracking.goals).
 */
export const TrackingEventSchema = defineEntity({
  name: 'TrackingEvent',
  tableName: 'tracking_events',
  indexes: [
    { name: 'tracking_events_contact_idx', properties: ['contact', 'createdAt'] },
    // The goals report: an organization's events of a period, by name.
    { name: 'tracking_events_org_created_idx', properties: ['organization', 'createdAt'] },
    {
      name: 'tracking_events_anonymous_visitor_idx',
      expression:
        'create index "tracking_events_anonymous_visitor_idx" on "tracking_events" ("organization_id", "visitor_id") where "contact_id" is null and "visitor_id" is not null',
    },
    // Retention's look-up by age, as for page views.
    {
      name: 'tracking_events_created_brin',
      expression: `create index "tracking_events_created_brin" on "tracking_events" using brin ("created_at") with (autosummarize = on)`,
    },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).nullable().deleteRule('cascade'),
    visitorId: p.text().nullable(),
    /** As the page sent it, checked (tracking/events.ts): letters, digits and `_ . : -`, at most 64 characters. */
    name: p.text(),
    /** At most 10 keys of scalar values. */
    props: p.json<Record<string, string | number | boolean | null>>().default('{}'),
    url: p.text(),
  },
});
export class TrackingEvent extends TrackingEventSchema.class {}
TrackingEventSchema.setClass(TrackingEvent);

/**
 * Which contact a snippet visitor id belongs to, once known: later page views of that browser are theirs. The latest
 * identification of a browser wins. `createdAt` keeps its database default: nothing expires by it.
 */
export const TrackingVisitorSchema = defineEntity({
  name: 'TrackingVisitor',
  tableName: 'tracking_visitors',
  uniques: [{ name: 'tracking_visitors_org_visitor_unique', properties: ['organization', 'visitorId'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    visitorId: p.text(),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
  },
});
export class TrackingVisitor extends TrackingVisitorSchema.class {}
TrackingVisitorSchema.setClass(TrackingVisitor);

/**
 * A link to the organization's own site in a text Leadwire sent, rewritten to `{base_url}/t/l/<token>`: the redirect
 * names the contact and emits `tracking.link_clicked`. The token is random (128 bits), so links cannot be guessed.
 */
export const TrackedLinkSchema = defineEntity({
  name: 'TrackedLink',
  tableName: 'tracked_links',
  uniques: [{ name: 'tracked_links_token_unique', properties: ['token'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    /** The text the link was sent in; null once that message is gone. */
    message: () => p.manyToOne(Message).nullable().deleteRule('set null'),
    token: p.text(),
    url: p.text(),
  },
});
export class TrackedLink extends TrackedLinkSchema.class {}
TrackedLinkSchema.setClass(TrackedLink);
