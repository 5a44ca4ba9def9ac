/**
 * Refusals that say what to do: a session token on /v1, a key its owner's account stopped (told only to whoever holds
 * the key's whole secret), a raw `+` in a search email, a body that is not a JSON object.
 */
import { hashKey } from '@leadwire/core';
import { generateToken } from '#core/auth/key-material.ts';
import { SESSION_PREFIX } from '#core/auth/sessions.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf, call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const search = (key: string, email = 'nobody@example.com') => call(t, 'GET', `/contacts/search?email=${email}`, { key });
const GENERIC = 'Invalid, revoked or expired API key';

describe('401 on /v1 names the credential it wants', () => {
  it('tells a session token that /v1 takes an API key', async () => {
    const r = await search(generateToken(SESSION_PREFIX));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({
      code: 'unauthorized',
      error: '/v1 takes an API key (ck_live_…), not a session token: create a Public API key for this integration',
    });
  });

  it('still calls anything else malformed just that', async () => {
    for (const key of ['ck_live_short', 'lws', 'sk_live_0123456789']) {
      expect((await search(key)).body).toEqual({ code: 'unauthorized', error: 'Malformed API key' });
    }
  });
});

describe('a key its owner stopped says why, to its holder only', () => {
  const STOPPED_BY_CREDENTIALS =
    "This API key stopped working when its owner's credentials changed (a password change or reset, log-out-all, or a deactivation): keys end with the owner's sessions; create a new key";

  it('after log-out-all (as after a password change): on the next request and when refused from memory', async () => {
    const org = await t.newOrg();
    expect((await search(org.publicKey)).status).toBe(404);
    const out = await answerOf(
      await fetch(`${t.origin}/api/accounts/log-out-all`, { method: 'POST', headers: { authorization: `Bearer ${org.internalKey}` } }),
    );
    expect(out.status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await search(org.publicKey)).body).toEqual({ code: 'unauthorized', error: STOPPED_BY_CREDENTIALS });
  });

  it("after the owner's deactivation", async () => {
    const org = await t.newOrg();
    await t.sql('update users set active = false where id = ?', [org.userId]);
    for (let i = 0; i < 2; i++) {
      expect((await search(org.publicKey)).body).toEqual({
        code: 'unauthorized',
        error:
          "This API key stopped working when its owner's account was deactivated; an owner or admin can reactivate the account, or create a new key",
      });
    }
  });

  it('tells nothing to a caller without the secret, nor about a revoked or expired key', async () => {
    const org = await t.newOrg();
    await t.sql('update users set active = false where id = ?', [org.userId]);
    // The same prefix with another body is another key: unknown, so the generic answer.
    const guess = `${org.publicKey.slice(0, -4)}${org.publicKey.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    expect((await search(guess)).body).toEqual({ code: 'unauthorized', error: GENERIC });

    const other = await t.newOrg();
    const revoked = await t.newKey({ orgId: other.orgId, userId: other.userId, name: 'r', type: 'public', permissions: ['contacts:read'] });
    await t.sql('update api_keys set revoked_at = now() where key_hash = ?', [hashKey(revoked)]);
    expect((await search(revoked)).body).toEqual({ code: 'unauthorized', error: GENERIC });
  });
});

describe('GET /v1/contacts/search?email=', () => {
  it('says a raw + must be percent-encoded (it reads as a space)', async () => {
    const org = await t.newOrg();
    const r = await search(org.publicKey, 'ada+news@example.com');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'validation_failed',
      issues: [
        {
          path: 'email',
          message:
            "email must be percent-encoded in the query string: a raw '+' reads as a space, so send '+' as %2B (ada%2Bnews@example.com)",
        },
      ],
    });
    // Encoded, it is an email like any other (here, one nobody has).
    expect((await search(org.publicKey, 'ada%2Bnews@example.com')).status).toBe(404);
    // Other bad emails keep their own message.
    expect((await search(org.publicKey, 'not-an-email')).body.issues).toEqual([
      { path: 'email', message: 'email must be a valid email address' },
    ]);
  });
});

describe('a REST body that is not a JSON object', () => {
  it('is refused as such on /v1 too, before anything reads it as fields', async () => {
    const org = await t.newOrg();
    const r = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: '[{"email":"ada@example.com"}]' });
    expect(r).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', error: 'Validation failed: the body must be a JSON object, not an array' },
    });
  });
});
