/**
 * `webhooks.eventTypes` (GET /api/webhooks/event-types): the event catalogue the console's event picker is built from,
 * over the typed client and REST, for every role; and `/webhooks/{id}` still reads an id, not the catalogue's path.
 */
import { hashPassword } from '#core/accounts/passwords.ts';
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { EVENT_NAMES } from '#core/events/names.ts';
import { SUBSCRIBABLE_EVENTS } from '#core/webhooks/endpoints/schemas.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { internalClient, internalRest, trpcFailure } from '../support/internal.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

describe('the webhook event catalogue', () => {
  it('lists every event in the catalogue order with its label, description, example and whether it may be subscribed', async () => {
    const { internalKey } = await t.newOrg();
    const types = await internalClient(t, internalKey).webhooks.eventTypes.query();
    expect(types.map((e) => e.name)).toEqual([...EVENT_NAMES]);
    expect(types.filter((e) => e.subscribable).map((e) => e.name)).toEqual([...SUBSCRIBABLE_EVENTS]);
    const created = types.find((e) => e.name === 'contact.created')!;
    expect(created).toMatchObject({ group: 'Contacts', label: EVENT_CATALOGUE['contact.created'].label, subscribable: true });
    expect(created.description.length).toBeGreaterThan(10);
    expect(created.example).toEqual(EVENT_CATALOGUE['contact.created'].example);
    expect(types.find((e) => e.name === 'ping')).toMatchObject({ subscribable: false, group: 'Test' });

    // The same over REST, at a path that the endpoint route `/webhooks/{id}` must not swallow.
    const rest = await internalRest(t, 'GET', '/webhooks/event-types', internalKey);
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual(types);
    const notAnId = await internalRest(t, 'GET', '/webhooks/event-typos', internalKey);
    expect(notAnId).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
  });

  it('answers a member too (the published catalogue), while the endpoints stay with owners and admins', async () => {
    const { orgId } = await t.newOrg();
    const [member] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, ?, 'member') returning id`,
      [orgId, `member-${Date.now()}@example.com`, await hashPassword('correct horse battery staple')],
    );
    const key = await t.newKey({ orgId, userId: member!.id, name: 'member tools', type: 'internal' });
    const client = internalClient(t, key);
    expect((await client.webhooks.eventTypes.query()).length).toBe(EVENT_NAMES.length);
    expect(await trpcFailure(client.webhooks.list.query({}))).toEqual({ status: 403, code: 'forbidden_role' });
  });

  it('refuses a caller without a key', async () => {
    const res = await fetch(`${t.origin}/api/webhooks/event-types`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthorized' });
  });
});
