import { answerOf, type TestApp } from '../support/app.ts';

export const VISITOR_A = 'visitoraaaaaaaaaaaaaaaaaaaa1';
export const VISITOR_B = 'visitorbbbbbbbbbbbbbbbbbbbb2';

/** POST /api/track/pageview as the snippet's sendBeacon sends it (text/plain), unless told otherwise. */
export async function collect(t: TestApp, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.origin}/api/track/pageview`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
  });
  return answerOf(res);
}

export interface PageViewRow {
  url: string;
  referrer: string | null;
  title: string | null;
  visitor_id: string | null;
  contact_id: string | null;
  created_at: Date;
}

export async function pageViews(t: TestApp, orgId: string): Promise<PageViewRow[]> {
  return t.sql<PageViewRow>(
    'select url, referrer, title, visitor_id, contact_id, created_at from page_views where organization_id = ? order by created_at, url',
    [orgId],
  );
}

export async function trackingEvents(t: TestApp, orgId: string): Promise<any[]> {
  const rows = await t.sql<{ payload: any }>(
    `select payload from outbox_events where organization_id = ? and event = 'tracking.page_visited' order by created_at, ctid`,
    [orgId],
  );
  return rows.map((r) => r.payload);
}
