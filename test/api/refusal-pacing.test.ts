/**
 * Refusals are paced per address: past a few a second they are held before they are answered, so a closed-loop flood
 * of them is slowed to one request per connection per hold, while the same address's valid key is answered at once.
 * First those /v1 answers from memory (a key the server did not find, a spent window); since issue 28 every refusal,
 * wherever it was decided (a key's first look-up, a sign-in, the application surface's budgets), counted per address
 * across surfaces. Time is the test clock's: the held refusal goes out when the clock is moved.
 */
import { passwordHashSlots, setPasswordHashSlots } from '#core/accounts/passwords.ts';
import { generateKeyValue } from '#core/auth/key-material.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerOf, call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp({ V1_REFUSALS_FREE_PER_SECOND: '3', V1_REFUSAL_DELAY_MS: '1000' });
});
afterAll(async () => t?.close());

const search = (key: string) => call(t, 'GET', '/contacts/search?email=nobody@example.com', { key });
const signIn = async (email: string) =>
  answerOf(
    await fetch(`${t.origin}/api/accounts/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'not the password' }),
    }),
  );

describe('refusals answered from memory', () => {
  it('are held past the free rate until the clock moves on; a valid key from the same address is not', async () => {
    const org = await t.newOrg();
    const unknown = generateKeyValue();
    // The first sight is a database look-up; from then on the server answers this key from memory.
    expect((await search(unknown)).status).toBe(401);
    t.clock.freeze();
    try {
      // A second of its own: the look-up above counted in the one before.
      t.clock.advance(1000);
      for (let i = 0; i < 3; i++) expect((await search(unknown)).status).toBe(401);
      expect(t.clock.sleeping).toBe(0);

      let answered = false;
      const held = search(unknown).then((r) => ((answered = true), r));
      await vi.waitFor(() => expect(t.clock.sleeping).toBe(1), { timeout: 5_000 });
      // The valid key's answer (404: no such contact) goes out at once, past the held refusal.
      expect((await search(org.publicKey)).status).toBe(404);
      expect(answered).toBe(false);

      t.clock.advance(1000);
      expect(await held).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
      expect(t.clock.sleeping).toBe(0);
    } finally {
      t.clock.unfreeze();
    }
  });
});

describe('every refusal, wherever it was decided', () => {
  it('counts per address across surfaces: first-sight keys and refused sign-ins, held past the free rate', async () => {
    t.clock.freeze();
    try {
      t.clock.advance(1000);
      // Decided in the database, not from memory: a key seen for the first time, and two sign-ins of nobody.
      expect((await search(generateKeyValue())).status).toBe(401);
      expect((await signIn(`nobody-1-${Date.now()}@example.com`)).body).toMatchObject({ code: 'invalid_credentials' });
      expect((await signIn(`nobody-2-${Date.now()}@example.com`)).status).toBe(401);
      expect(t.clock.sleeping).toBe(0);

      let answered = false;
      const held = signIn(`nobody-3-${Date.now()}@example.com`).then((r) => ((answered = true), r));
      await vi.waitFor(() => expect(t.clock.sleeping).toBe(1), { timeout: 5_000 });
      const another = search(generateKeyValue()).then((r) => ((answered = true), r));
      await vi.waitFor(() => expect(t.clock.sleeping).toBe(2), { timeout: 5_000 });
      expect(answered).toBe(false);

      t.clock.advance(1000);
      expect(await held).toMatchObject({ status: 401, body: { code: 'invalid_credentials' } });
      expect(await another).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    } finally {
      t.clock.unfreeze();
    }
  });

  it("counts a full hashing queue (503) for the whole process, apart from the address's own refusals", async () => {
    const limits = passwordHashSlots().limits;
    setPasswordHashSlots({ concurrency: 1, queue: 0, maxWaitMs: 60_000 });
    const release = await passwordHashSlots().acquire();
    t.clock.freeze();
    try {
      t.clock.advance(1000);
      for (let i = 0; i < 3; i++)
        expect((await signIn(`busy-${i}-${Date.now()}@example.com`)).body).toMatchObject({ code: 'service_unavailable' });
      // The address's own budget of refusals is untouched by them.
      expect((await search(generateKeyValue())).status).toBe(401);
      expect(t.clock.sleeping).toBe(0);
      const held = signIn(`busy-3-${Date.now()}@example.com`);
      await vi.waitFor(() => expect(t.clock.sleeping).toBe(1), { timeout: 5_000 });
      t.clock.advance(1000);
      expect(await held).toMatchObject({ status: 503, body: { code: 'service_unavailable' } });
    } finally {
      t.clock.unfreeze();
      release();
      setPasswordHashSlots(limits);
    }
  });
});
