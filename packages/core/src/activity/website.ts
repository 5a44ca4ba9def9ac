import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { iso } from '../records/dates.ts';
import type { Website, WebsiteInput } from './schemas.ts';
import { bucketsOf } from './service.ts';
import { IDENTIFIED, TOP_PAGES, TOP_REFERRERS, TOP_UTM_CAMPAIGNS, TOP_UTM_SOURCES, WEBSITE_SERIES, WEBSITE_TOTALS } from './website-sql.ts';

/**
 * The website's analytics, as Plausible shows them on one page (issue 29): visitors and page views over time, top
 * pages, referrers, UTM sources and campaigns, and the visitors who became contacts; for the whole site or one page.
 */
export async function websiteAnalytics(db: Db, actor: InternalActor, input: WebsiteInput, now: Date): Promise<Website> {
  const { bucket, starts, stride } = bucketsOf(input.period, now);
  const filter = { orgId: actor.orgId, from: starts[0]!, page: input.page ?? null };
  const [series, [totals], pages, referrers, utmSources, utmCampaigns, contacts] = await Promise.all([
    db.run(WEBSITE_SERIES, { ...filter, stride }),
    db.run(WEBSITE_TOTALS, filter),
    db.run(TOP_PAGES, filter),
    db.run(TOP_REFERRERS, filter),
    db.run(TOP_UTM_SOURCES, filter),
    db.run(TOP_UTM_CAMPAIGNS, filter),
    db.run(IDENTIFIED, filter),
  ]);
  const at = new Map(series.map((r) => [new Date(r.bucket).getTime(), r]));
  const breakdown = (rows: { value: string | null; views: number; visitors: number }[]) =>
    rows.map((r) => ({ value: r.value ?? '', views: r.views, visitors: r.visitors }));
  return {
    period: input.period,
    page: input.page ?? null,
    bucket,
    timeZone: 'UTC',
    buckets: starts.map(iso),
    views: starts.map((d) => at.get(d.getTime())?.views ?? 0),
    visitors: starts.map((d) => at.get(d.getTime())?.visitors ?? 0),
    totals: {
      views: totals?.views ?? 0,
      visitors: totals?.visitors ?? 0,
      anonymousViews: totals?.anonymous ?? 0,
      identified: totals?.identified ?? 0,
    },
    pages: breakdown(pages),
    referrers: breakdown(referrers),
    utmSources: breakdown(utmSources),
    utmCampaigns: breakdown(utmCampaigns),
    contacts: contacts.map((c) => ({
      id: c.id,
      email: c.email,
      name: [c.first_name, c.last_name].filter(Boolean).join(' ') || null,
      views: c.views,
      lastSeenAt: iso(c.last_seen),
    })),
  };
}
