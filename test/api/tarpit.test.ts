/**
 * Refusals past an address's free rate are answered late (README, "Slow and abusive connections"): a closed-loop flood
 * of refused requests is slowed to one request per connection per delay, while the same address's successes, and other
 * addresses, are answered at once. Time is the test clock's: the held answer goes out when the clock is moved.
 */
import { generateKeyValue } from '@leadwire/core/auth/key-material.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp({ HTTP_REFUSALS_FREE_PER_SECOND: '3', HTTP_REFUSAL_DELAY_MS: '1000' });
});
afterAll(async () => t?.close());

const search = (key: string) => call(t, 'GET', '/contacts/search?email=nobody@example.com', { key });

/** Until `ok()` holds, checking on each turn of the event loop; the bound only stops a hang. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('refusals past the free rate', () => {
  it('are held until the clock moves on; successes from the same address are not', async () => {
    const org = await t.newOrg();
    t.clock.freeze();
    try {
      for (let i = 0; i < 3; i++) expect((await search(generateKeyValue())).status).toBe(401);
      expect(t.clock.sleeping).toBe(0);

      let answered = false;
      const held = search(generateKeyValue()).then((r) => ((answered = true), r));
      await until(() => t.clock.sleeping === 1, 'the fourth refusal is held');
      // The valid key's answer (404: no such contact) goes out at once, past the held refusal.
      expect((await search(org.publicKey)).status).toBe(404);
      expect(answered).toBe(false);

      t.clock.advance(1000);
      expect((await held).status).toBe(401);
      expect(t.clock.sleeping).toBe(0);
    } finally {
      t.clock.unfreeze();
    }
  });
});
