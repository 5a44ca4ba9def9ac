import { answerOf, type TestApp } from '../support/app.ts';

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** POST /api/capture/<org> as the script sends it (text/plain JSON from another origin), unless told otherwise. */
export async function capture(t: TestApp, orgId: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${t.origin}/api/capture/${orgId}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
  });
  return answerOf(res);
}

/** Everything a capture may leave behind in an organization: contacts, submissions, events, placements. */
export async function footprint(t: TestApp, orgId: string) {
  const [row] = await t.sql<{ contacts: number; submissions: number; events: number; items: number }>(
    `select (select count(*) from contacts where organization_id = ?)::int as contacts,
            (select count(*) from form_submissions where organization_id = ?)::int as submissions,
            (select count(*) from outbox_events where organization_id = ?)::int as events,
            (select count(*) from pipeline_items where organization_id = ?)::int as items`,
    [orgId, orgId, orgId, orgId],
  );
  return row!;
}

export const captureSubmissions = (t: TestApp, orgId: string) =>
  t.sql<{
    id: string;
    form_id: string | null;
    form_name: string;
    contact_id: string | null;
    answers: any;
    attribution: any;
    pipeline_item_id: string | null;
  }>(
    `select id, form_id, form_name, contact_id, answers, attribution, pipeline_item_id from form_submissions where organization_id = ? order by created_at, ctid`,
    [orgId],
  );

export const formSubmittedEvents = async (t: TestApp, orgId: string) =>
  (
    await t.sql<{ payload: any }>(
      `select payload from outbox_events where organization_id = ? and event = 'form.submitted' order by created_at, ctid`,
      [orgId],
    )
  ).map((r) => r.payload);
