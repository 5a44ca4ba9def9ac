/**
 * /v1 refusals answered from memory (a key the server did not find, a spent window) are paced per address: past a few
 * a second they are held before they are answered, so a closed-loop flood of them is slowed to one request per
 * connection per hold, while the same address's valid key is answered at once. Time is the test clock's: the held
 * refusal goes out when the clock is moved.
 */
import { generateKeyValue } from '#core/auth/key-material.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp({ V1_REFUSALS_FREE_PER_SECOND: '3', V1_REFUSAL_DELAY_MS: '1000' });
});
afterAll(async () => t?.close());

const search = (key: string) => call(t, 'GET', '/contacts/search?email=nobody@example.com', { key });

describe('refusals answered from memory', () => {
  it('are held past the free rate until the clock moves on; a valid key from the same address is not', async () => {
    const org = await t.newOrg();
    const unknown = generateKeyValue();
    // The first sight is a database look-up; from then on the server answers this key from memory.
    expect((await search(unknown)).status).toBe(401);
    t.clock.freeze();
    try {
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
