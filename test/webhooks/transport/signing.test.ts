import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSigningSecret } from '../../../packages/core/src/webhooks/transport/secret.ts';
import { signDelivery } from '../../../packages/core/src/webhooks/transport/signing.ts';

/**
 * The Standard Webhooks check written from the spec (standard-webhooks.md, "Verifying webhooks"): the key is the
 * base64-decoded part after `whsec_`, the signed content `id.timestamp.body`, the header a space-separated list of
 * `v1,<base64>`; any one matching signature verifies. Written here rather than imported so that a bug shared by our
 * signer and one library cannot hide.
 */
function specVerifies(secret: string, headers: Record<string, string>, rawBody: Buffer): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const content = Buffer.concat([Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.`), rawBody]);
  const expected = createHmac('sha256', key).update(content).digest();
  return (headers['webhook-signature'] ?? '').split(' ').some((entry) => {
    const [version, sig] = entry.split(',');
    if (version !== 'v1' || !sig) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const base = { messageId: 'dlv_1', attemptId: 'att_1', event: 'contact.created', at: new Date('2026-11-22T10:00:00.123Z') };

describe('signDelivery', () => {
  it('builds every header of a delivery', () => {
    const secret = newSigningSecret();
    const body = '{"event":"contact.created"}';
    const h = signDelivery({ ...base, body, secret });
    expect(Object.keys(h).sort()).toEqual(
      [
        'X-Webhook-Event',
        'X-Webhook-Id',
        'X-Webhook-Signature',
        'X-Webhook-Timestamp',
        'content-type',
        'user-agent',
        'webhook-id',
        'webhook-signature',
        'webhook-timestamp',
      ].sort(),
    );
    expect(h['content-type']).toBe('application/json');
    expect(h['user-agent']).toBe('Leadwire-Webhooks/1.0');
    expect(h['X-Webhook-Event']).toBe('contact.created');
    // Unix seconds, truncated, and the same value in both schemes.
    expect(h['X-Webhook-Timestamp']).toBe('1795341600');
    expect(h['webhook-timestamp']).toBe('1795341600');
    // X-Webhook-Id is the attempt (new each attempt); webhook-id the delivery (stable, Standard Webhooks' idempotency key).
    expect(h['X-Webhook-Id']).toBe('att_1');
    expect(h['webhook-id']).toBe('dlv_1');
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('X-Webhook-Signature is the lowercase hex HMAC of the body keyed with the whole secret (the documented one-liner)', () => {
    const secret = newSigningSecret();
    const body = '{"event":"ping","data":{"message":"hi"}}';
    const h = signDelivery({ ...base, body, secret });
    expect(h['X-Webhook-Signature']).toBe(createHmac('sha256', secret).update(body).digest('hex'));
    expect(h['X-Webhook-Signature']).toMatch(/^[0-9a-f]{64}$/);
    // Keyed with the whole string, not the decoded part (that key belongs to the Standard Webhooks scheme only).
    const decodedKey = Buffer.from(secret.slice(6), 'base64');
    expect(h['X-Webhook-Signature']).not.toBe(createHmac('sha256', decodedKey).update(body).digest('hex'));
  });

  it('matches the Standard Webhooks reference vector', () => {
    // The example published with the Standard Webhooks / Svix libraries' test suites.
    const h = signDelivery({
      body: '{"test": 2432232314}',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      attemptId: 'att',
      event: 'ping',
      at: new Date(1614265330_000),
    });
    expect(h['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('the Standard Webhooks signature verifies with the spec algorithm and with the standardwebhooks library', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ event: 'contact.updated', data: { contact: { id: 'c1' } } });
    // The library refuses timestamps more than 5 minutes from its own wall clock, so this one is signed "now".
    const h = signDelivery({ ...base, body, secret, at: new Date() });
    expect(specVerifies(secret, h, Buffer.from(body))).toBe(true);
    expect(new Webhook(secret).verify(body, h)).toEqual(JSON.parse(body));
    // A changed byte, id or timestamp breaks it.
    expect(() => new Webhook(secret).verify(body.replace('c1', 'c2'), h)).toThrow(/No matching signature/);
    expect(specVerifies(secret, { ...h, 'webhook-id': 'dlv_2' }, Buffer.from(body))).toBe(false);
    expect(specVerifies(secret, { ...h, 'webhook-timestamp': String(Number(h['webhook-timestamp']) + 1) }, Buffer.from(body))).toBe(false);
    expect(() => new Webhook(newSigningSecret()).verify(body, h)).toThrow(/No matching signature/);
  });

  it('signs a non-ASCII body over its UTF-8 bytes', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ data: { contact: { firstName: 'Zoë', lastName: '山田', note: 'emoji 🚀' } } });
    const raw = Buffer.from(body, 'utf8');
    expect(raw.length).toBeGreaterThan(body.length);
    const h = signDelivery({ ...base, body, secret, at: new Date() });
    expect(h['X-Webhook-Signature']).toBe(createHmac('sha256', secret).update(raw).digest('hex'));
    // Not latin1 (a signer that hashed UTF-16 code units truncated to bytes would produce this one).
    expect(h['X-Webhook-Signature']).not.toBe(createHmac('sha256', secret).update(Buffer.from(body, 'latin1')).digest('hex'));
    expect(specVerifies(secret, h, raw)).toBe(true);
    expect(new Webhook(secret).verify(raw, h)).toEqual(JSON.parse(body));
  });

  it('during a rotation carries two Standard Webhooks signatures, each verifying with its own secret', () => {
    const secret = newSigningSecret();
    const previousSecret = newSigningSecret();
    const body = '{"event":"contact.deleted"}';
    const h = signDelivery({ ...base, body, secret, previousSecret, at: new Date() });
    const entries = (h['webhook-signature'] ?? '').split(' ');
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => /^v1,[A-Za-z0-9+/]{43}=$/.test(e))).toBe(true);
    // Each secret matches exactly one entry: the first is the current secret's, the second the previous one's.
    expect(specVerifies(secret, { ...h, 'webhook-signature': entries[0] as string }, Buffer.from(body))).toBe(true);
    expect(specVerifies(previousSecret, { ...h, 'webhook-signature': entries[1] as string }, Buffer.from(body))).toBe(true);
    expect(specVerifies(secret, { ...h, 'webhook-signature': entries[1] as string }, Buffer.from(body))).toBe(false);
    expect(new Webhook(secret).verify(body, h)).toEqual(JSON.parse(body));
    expect(new Webhook(previousSecret).verify(body, h)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, h)).toThrow(/No matching signature/);
    // The hex header stays one value, for the current secret only.
    expect(h['X-Webhook-Signature']).toBe(createHmac('sha256', secret).update(body).digest('hex'));
  });

  it('without a previous secret (null or absent) carries one signature', () => {
    const secret = newSigningSecret();
    for (const previousSecret of [null, undefined]) {
      const h = signDelivery({ ...base, body: '{}', secret, previousSecret });
      expect((h['webhook-signature'] ?? '').split(' ')).toHaveLength(1);
    }
  });
});
