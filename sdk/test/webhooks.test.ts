import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { TestApp } from '../../test/support/app.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../../test/support/receiver.ts';
import { rest } from '../../test/internal/contacts-support.ts';
import { type Endpoint, insertEndpoint, startDeliveringApp, upsertContact } from '../../test/webhooks/delivery/support.ts';
import type { AnyEventDefinition } from '../../packages/core/src/events/catalogue.ts';
import type { EventName } from '../../packages/core/src/events/names.ts';
import type { z } from 'zod';
import {
  dedupeKey,
  verifyWebhook,
  verifyWebhookBodySignature,
  type WebhookEvent,
  type WebhookEventName,
  type WebhookEventOf,
  WebhookVerificationError,
  type VerifyWebhookInput,
} from '../src/webhooks.ts';

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

const STANDARD = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
const PLAIN = ['x-webhook-signature'];

/** The headers as received, less the named ones: a receiver that only sees one scheme. */
const without = (h: IncomingHttpHeaders, names: string[]) => Object.fromEntries(Object.entries(h).filter(([k]) => !names.includes(k)));

/** One /v1 upsert delivered to a fresh endpoint on its own path of the receiver. */
async function delivered(path: string): Promise<{ req: ReceivedRequest; endpoint: Endpoint; org: Awaited<ReturnType<TestApp['newOrg']>> }> {
  const org = await t.newOrg();
  const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/${path}`);
  await upsertContact(t, org.publicKey);
  const req = await arrival(path);
  return { req, endpoint, org };
}

async function arrival(path: string, nth = 1): Promise<ReceivedRequest> {
  for (let n = rx.requests.length; ; n++) {
    const got = (await rx.waitFor(n)).filter((r) => r.url === `/${path}`);
    if (got.length >= nth) return got[nth - 1]!;
  }
}

/** The reason a verification was refused with (fails the test when it was accepted or threw something else). */
async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WebhookVerificationError);
  return (err as WebhookVerificationError).reason;
}

describe('verifyWebhook against deliveries of the real delivery worker', () => {
  it('accepts the Standard Webhooks headers alone, and X-Webhook-Signature alone only through verifyWebhookBodySignature', async () => {
    const { req, endpoint } = await delivered('both');
    const now = t.clock.now();
    const plain = await verifyWebhookBodySignature({
      rawBody: req.rawBody,
      headers: without(req.headers, STANDARD),
      secret: endpoint.secret,
    });
    const std = await verifyWebhook({ rawBody: req.rawBody, headers: without(req.headers, PLAIN), secret: endpoint.secret, now });
    expect(plain).toEqual(JSON.parse(req.rawBody.toString('utf8')));
    expect(std).toEqual(plain);
    expect(std).toMatchObject({ event: 'contact.created', source: 'api' });
    if (std.event !== 'contact.created') throw new Error('narrowing');
    expectTypeOf(std.data.contact.email).toEqualTypeOf<string | null>();
    expect(std.data.contact.firstName).toBe('Ada');
    // A fetch-style Headers and a body given as text verify too.
    const headers = new Headers(without(req.headers, PLAIN) as Record<string, string>);
    expect(await verifyWebhook({ rawBody: req.rawBody.toString('utf8'), headers, secret: endpoint.secret, now })).toEqual(plain);
  });

  it('refuses a tampered body, a wrong secret, a missing header, an old or future timestamp; a parsed body is an error', async () => {
    const { req, endpoint } = await delivered('refusals');
    const now = t.clock.now();
    const tampered = Buffer.from(req.rawBody.toString('utf8').replace('"Ada"', '"Eve"'));
    const other = (await insertEndpoint(t, (await t.newOrg()).orgId, `${rx.origin}/unused`)).secret;
    // Each scheme over its own headers (whatever headers the call names): the body-only one, then verifyWebhook.
    const checks = [
      (input: VerifyWebhookInput) => verifyWebhookBodySignature({ ...input, headers: without(req.headers, STANDARD) }),
      (input: VerifyWebhookInput) => verifyWebhook({ ...input, headers: without(req.headers, PLAIN) }),
    ];
    for (const check of checks) {
      const headers = {}; // replaced by the check's own
      expect(await refusal(check({ rawBody: tampered, headers, secret: endpoint.secret, now }))).toBe('invalid_signature');
      expect(await refusal(check({ rawBody: req.rawBody, headers, secret: other, now }))).toBe('invalid_signature');
      expect(await refusal(check({ rawBody: req.rawBody, headers, secrets: [], now }))).toBe('missing_secret');
      expect(await refusal(check({ rawBody: JSON.parse(req.rawBody.toString()), headers, secret: endpoint.secret, now }))).toBe(
        'invalid_payload',
      );
    }
    const std = without(req.headers, PLAIN);
    expect(
      await refusal(
        verifyWebhook({ rawBody: req.rawBody, headers: without(req.headers, [...STANDARD, ...PLAIN]), secret: endpoint.secret }),
      ),
    ).toBe('missing_headers');
    expect(
      await refusal(verifyWebhook({ rawBody: req.rawBody, headers: without(std, ['webhook-id']), secret: endpoint.secret, now })),
    ).toBe('missing_headers');
    expect(
      await refusal(
        verifyWebhook({ rawBody: req.rawBody, headers: { ...std, 'webhook-timestamp': 'soon' }, secret: endpoint.secret, now }),
      ),
    ).toBe('malformed_header');
    // Another delivery's id with this one's signature: the id is signed too.
    expect(
      await refusal(verifyWebhook({ rawBody: req.rawBody, headers: { ...std, 'webhook-id': 'msg_other' }, secret: endpoint.secret, now })),
    ).toBe('invalid_signature');
    // Tolerance is measured from the signed timestamp, not from when the test got the delivery (later on a busy machine).
    const signedAt = Number(std['webhook-timestamp']) * 1000;
    const at = (s: number) => new Date(signedAt + s * 1000);
    expect(await verifyWebhook({ rawBody: req.rawBody, headers: std, secret: endpoint.secret, now: at(299) })).toBeDefined();
    expect(await refusal(verifyWebhook({ rawBody: req.rawBody, headers: std, secret: endpoint.secret, now: at(301) }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(await refusal(verifyWebhook({ rawBody: req.rawBody, headers: std, secret: endpoint.secret, now: at(-301) }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(
      await verifyWebhook({ rawBody: req.rawBody, headers: std, secret: endpoint.secret, now: at(3000), toleranceSeconds: 3600 }),
    ).toBeDefined();
    // X-Webhook-Signature must be the whole lowercase hex digest.
    const hex = String(req.headers['x-webhook-signature']);
    const plain = without(req.headers, STANDARD);
    for (const bad of [hex.toUpperCase(), `sha256=${hex}`, hex.slice(0, 63), '']) {
      expect(
        await refusal(
          verifyWebhookBodySignature({ rawBody: req.rawBody, headers: { ...plain, 'x-webhook-signature': bad }, secret: endpoint.secret }),
        ),
      ).toMatch(/invalid_signature|missing_headers/);
    }
  });

  it('during a rotation accepts secrets [old, new]; the old one alone only through the Standard Webhooks signature', async () => {
    const { endpoint, org } = await delivered('rotation');
    const rotated = await rest(t, 'POST', `/webhooks/${endpoint.id}/rotate-secret`, org.internalKey);
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.body.secret;
    await upsertContact(t, org.publicKey);
    const req = await arrival('rotation', 2);
    const now = t.clock.now();
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const secrets = [endpoint.secret, fresh];
    expect(await verifyWebhookBodySignature({ rawBody: req.rawBody, headers: without(req.headers, STANDARD), secrets })).toMatchObject({
      event: 'contact.created',
    });
    expect(await verifyWebhook({ rawBody: req.rawBody, headers: without(req.headers, PLAIN), secrets, now })).toMatchObject({
      event: 'contact.created',
    });
    expect(
      await verifyWebhook({ rawBody: req.rawBody, headers: without(req.headers, PLAIN), secrets: [endpoint.secret], now }),
    ).toBeDefined();
    expect(
      await refusal(
        verifyWebhookBodySignature({ rawBody: req.rawBody, headers: without(req.headers, STANDARD), secrets: [endpoint.secret] }),
      ),
    ).toBe('invalid_signature');
  });
});

describe('verifyWebhook cannot be downgraded to the body-only signature', () => {
  it('refuses a captured delivery with webhook-signature, or all three webhook-* headers, stripped', async () => {
    const { req, endpoint } = await delivered('downgrade');
    const secret = endpoint.secret;
    // The replay: the same delivery 777 seconds after it was signed.
    const late = new Date((Number(req.headers['webhook-timestamp']) + 777) * 1000);
    expect(await refusal(verifyWebhook({ rawBody: req.rawBody, headers: req.headers, secret, now: late }))).toBe(
      'timestamp_out_of_tolerance',
    );
    for (const stripped of [['webhook-signature'], STANDARD, ['webhook-id'], ['webhook-timestamp']]) {
      const headers = without(req.headers, stripped);
      expect(headers['x-webhook-signature']).toBeDefined();
      const err = await verifyWebhook({ rawBody: req.rawBody, headers, secret, now: late }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WebhookVerificationError);
      expect((err as WebhookVerificationError).reason).toBe('missing_headers');
      // The message names what is missing and where the weaker check lives, so the refusal is not a mystery.
      for (const name of stripped) expect((err as Error).message).toContain(name);
      expect((err as Error).message).toContain('verifyWebhookBodySignature');
      // Fresh, the same stripped delivery is refused too: the default never falls back, whatever the time.
      expect(await refusal(verifyWebhook({ rawBody: req.rawBody, headers, secret, now: t.clock.now() }))).toBe('missing_headers');
    }
    // Nothing at all, or only the legacy trio: refused.
    expect(await refusal(verifyWebhook({ rawBody: req.rawBody, headers: {}, secret }))).toBe('missing_headers');
    const legacy = without(req.headers, STANDARD);
    expect(await refusal(verifyWebhook({ rawBody: req.rawBody, headers: new Headers(legacy as Record<string, string>), secret }))).toBe(
      'missing_headers',
    );
  });

  it('checks the body-only X-Webhook-Signature only when asked by name, and then accepts an old delivery (no replay protection)', async () => {
    const { req, endpoint } = await delivered('legacy');
    const legacy = without(req.headers, STANDARD);
    const event = await verifyWebhookBodySignature({ rawBody: req.rawBody, headers: legacy, secret: endpoint.secret });
    expect(event).toEqual(JSON.parse(req.rawBody.toString('utf8')));
    // What the name warns about: this scheme signs no time, so a delivery captured long ago still verifies.
    expect(
      await verifyWebhookBodySignature({
        rawBody: req.rawBody,
        headers: { ...legacy, 'x-webhook-timestamp': '1' },
        secret: endpoint.secret,
      }),
    ).toEqual(event);
    expect(
      await refusal(verifyWebhookBodySignature({ rawBody: req.rawBody, headers: without(req.headers, PLAIN), secret: endpoint.secret })),
    ).toBe('missing_headers');
    const tampered = Buffer.from(req.rawBody.toString('utf8').replace('"Ada"', '"Eve"'));
    expect(await refusal(verifyWebhookBodySignature({ rawBody: tampered, headers: legacy, secret: endpoint.secret }))).toBe(
      'invalid_signature',
    );
    expect(await refusal(verifyWebhookBodySignature({ rawBody: req.rawBody, headers: legacy, secrets: [] }))).toBe('missing_secret');
  });
});

describe('dedupeKey', () => {
  it('is the same for two deliveries of one event and differs between events', async () => {
    const org = await t.newOrg();
    const a = await insertEndpoint(t, org.orgId, `${rx.origin}/dedupe-a`);
    const b = await insertEndpoint(t, org.orgId, `${rx.origin}/dedupe-b`);
    await upsertContact(t, org.publicKey, 'dedupe@example.com');
    const [ra, rb] = [await arrival('dedupe-a'), await arrival('dedupe-b')];
    expect(ra.headers['x-webhook-id']).not.toBe(rb.headers['x-webhook-id']);
    const ea = await verifyWebhook({ rawBody: ra.rawBody, headers: ra.headers, secret: a.secret, now: t.clock.now() });
    const eb = await verifyWebhook({ rawBody: rb.rawBody, headers: rb.headers, secret: b.secret, now: t.clock.now() });
    expect(dedupeKey(ea)).toBe(dedupeKey(eb));
    if (ea.event !== 'contact.created') throw new Error('narrowing');
    expect(dedupeKey(ea)).toBe(`contact.created|${ea.timestamp}|${ea.data.contact.id}`);

    await upsertContact(t, org.publicKey, 'dedupe@example.com');
    const second = await arrival('dedupe-a', 2);
    const again = await verifyWebhook({ rawBody: second.rawBody, headers: second.headers, secret: a.secret, now: t.clock.now() });
    expect(again.event).toBe('contact.updated');
    expect(dedupeKey(again)).not.toBe(dedupeKey(ea));
  });

  it('keeps events of one name at one instant apart where the record alone cannot (one tag_added per tag)', () => {
    const base = { event: 'contact.tag_added', timestamp: '2026-11-22T14:03:07.123Z', source: 'api' } as const;
    const contact = { id: 'c1' } as WebhookEventOf<'contact.tag_added'>['data']['contact'];
    const one: WebhookEvent = { ...base, id: 'e1', data: { contact, tag: 'vip' } };
    const two: WebhookEvent = { ...base, id: 'e2', data: { contact, tag: 'newsletter' } };
    expect(dedupeKey(one)).not.toBe(dedupeKey(two));
    expect(dedupeKey({ id: 'e3', event: 'ping', timestamp: base.timestamp, data: { message: 'hi' } })).toBe(`ping|${base.timestamp}|`);
  });
});

describe('types', () => {
  it("its event types (from the v1 document's webhooks) are the catalogue's: every name, and every event's data", () => {
    expectTypeOf<WebhookEventName>().toEqualTypeOf<EventName>();
    type CatalogueData = { [N in EventName]: z.output<Extract<AnyEventDefinition, { name: N }>['data']> };
    type DocumentData = { [N in EventName]: WebhookEventOf<N>['data'] };
    expectTypeOf<DocumentData>().toEqualTypeOf<CatalogueData>();
  });
});
