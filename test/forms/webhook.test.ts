import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { newTestOrg } from '../internal/contacts-support.ts';
import { expectSigned, insertEndpoint, startDeliveringApp, waitForLog } from '../webhooks/delivery/support.ts';
import { newForm, submitJson } from './support.ts';

let t: TestApp;
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
  t = await startDeliveringApp();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

describe('form.submitted by webhook', () => {
  it('is delivered, signed, to an endpoint subscribed to it, with the payload the catalogue describes', async () => {
    const a = await newTestOrg(t);
    const endpoint = await insertEndpoint(t, a.orgId, `${rx.origin}/forms`, { events: ['form.submitted'] });
    const form = await newForm(a.member);
    expect((await submitJson(t, form.id, { email: 'hooked@example.com', topic: 'Demo', consent: true, utm_source: 'ads' })).status).toBe(
      200,
    );
    const [line] = await waitForLog(t, endpoint.id, 1);
    expect(line).toMatchObject({ event: 'form.submitted', outcome: 'succeeded' });
    const req = rx.requests.find((r) => r.url === '/forms')!;
    expectSigned(req, endpoint.secret);
    expect(req.headers['x-webhook-event']).toBe('form.submitted');
    const payload = JSON.parse(req.rawBody.toString('utf8'));
    expect(EVENT_CATALOGUE['form.submitted'].payload.parse(payload)).toEqual(payload);
    expect(payload).toMatchObject({
      source: 'inbound',
      data: {
        form: { id: form.id },
        submission: { fields: { email: 'hooked@example.com' }, attribution: { utm: { source: 'ads' } } },
        contact: { email: 'hooked@example.com' },
      },
    });
  });
});
