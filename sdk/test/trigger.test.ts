import { exampleFor } from '../../packages/core/src/events/catalogue.ts';
import { EVENT_NAMES } from '../../packages/core/src/events/names.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../test/support/app.ts';
import { type Receiver, startReceiver } from '../../test/support/receiver.ts';
import { expectSigned, insertEndpoint, startDeliveringApp } from '../../test/webhooks/delivery/support.ts';
import { listenCommand } from '../src/cli/commands/listen.ts';
import { triggerCommand } from '../src/cli/commands/trigger.ts';
import { UsageError } from '../src/cli/exit-codes.ts';
import { verifyWebhook } from '../src/webhooks.ts';
import { localReceiver, startCommand } from './support/listen.ts';

let t: TestApp;
let rx: Receiver;
let org: { orgId: string; userId: string; publicKey: string; internalKey: string };
let base: string;

beforeAll(async () => {
  t = await startDeliveringApp();
  rx = await startReceiver();
  org = await t.newOrg({ plan: 'max' });
  base = `${t.origin}/api`;
});
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const trigger = async (argv: string[], key = org.internalKey) => {
  const r = await startCommand(triggerCommand, ['--base-url', base, ...argv], { LEADWIRE_API_KEY: key });
  return { code: await r.done, stdout: r.stdout(), stderr: r.stderr() };
};

describe('leadwire trigger', () => {
  it('reaches a running listen, and with --endpoint a real HTTPS endpoint too', async () => {
    const local = await localReceiver();
    const listening = await startCommand(listenCommand, ['--base-url', base, '--forward-to', local.url], {
      LEADWIRE_API_KEY: org.internalKey,
    });
    try {
      const secret = (await listening.stderrMatch(/secret is (whsec_\S+)/))[1]!;
      const sent = await trigger(['deal.won']);
      expect(sent.code).toBe(0);
      const answer = JSON.parse(sent.stdout);
      expect(answer).toMatchObject({ event: 'deal.won', listening: true, delivery: null });
      expect(sent.stderr).toContain(`Sent deal.won (example ${answer.id}`);
      const [got] = await local.waitFor(1);
      const event = await verifyWebhook({ rawBody: got!.rawBody, headers: got!.headers, secret });
      expect(event).toEqual({ ...exampleFor('deal.won'), id: answer.id, timestamp: answer.payload.timestamp });
      expect(got!.headers['webhook-id']).toBe(answer.id);

      const endpoint = await insertEndpoint(t, org.orgId, `${rx.origin}/endpoint`, { events: ['contact.created'] });
      const before = rx.requests.length;
      const both = await trigger(['form.submitted', '--endpoint', endpoint.id]);
      expect(both.code).toBe(0);
      const second = JSON.parse(both.stdout);
      expect(second.delivery).toMatchObject({ state: 'pending' });
      expect(both.stderr).toContain(`Queued delivery ${second.delivery.deliveryId} to endpoint ${endpoint.id}`);
      const real = (await rx.waitFor(before + 1)).slice(before).find((q) => q.url === '/endpoint')!;
      expectSigned(real, endpoint.secret);
      const [, local2] = await local.waitFor(2);
      expect(local2!.rawBody.equals(real.rawBody)).toBe(true);
    } finally {
      expect(await listening.stop()).toBe(0);
      await local.close();
    }
  });

  it('says the example is synthetic (its contact answers 404), and --create sends a real contact.created instead', async () => {
    const local = await localReceiver();
    const listening = await startCommand(listenCommand, ['--base-url', base, '--forward-to', local.url, '--events', 'contact.created'], {
      LEADWIRE_API_KEY: org.internalKey,
    });
    const getContact = (id: string) => fetch(`${base}/contacts/${id}`, { headers: { authorization: `Bearer ${org.internalKey}` } });
    try {
      const secret = (await listening.stderrMatch(/secret is (whsec_\S+)/))[1]!;
      const example = await trigger(['contact.created']);
      expect(example.code).toBe(0);
      const answer = JSON.parse(example.stdout);
      expect(answer.synthetic).toBe(true);
      const exampleId = answer.payload.data.contact.id as string;
      expect(example.stderr).toContain(`synthetic example: its ids (contact ${exampleId}) do not exist on the server`);
      expect(example.stderr).toContain('`leadwire trigger contact.created --create` sends a real one');
      expect((await getContact(exampleId)).status).toBe(404);
      await local.waitFor(1);

      const real = await trigger(['contact.created', '--create']);
      expect(real.code, real.stderr).toBe(0);
      const made = JSON.parse(real.stdout);
      expect(made).toMatchObject({ event: 'contact.created', synthetic: false, contact: { id: expect.any(String) } });
      expect(real.stderr).toContain(`Created contact ${made.contact.id}`);
      const [, got] = await local.waitFor(2);
      const event = await verifyWebhook({ rawBody: got!.rawBody, headers: got!.headers, secret });
      expect(event).toMatchObject({ event: 'contact.created', data: { contact: { id: made.contact.id, email: made.contact.email } } });
      const stored = await getContact(made.contact.id);
      expect(stored.status).toBe(200);
    } finally {
      expect(await listening.stop()).toBe(0);
      await local.close();
    }
  });

  it('refuses --create for an event it cannot make real, and with --endpoint', async () => {
    await expect(trigger(['deal.won', '--create'])).rejects.toThrow(/--create makes a real contact.created only/);
    await expect(trigger(['contact.created', '--create', '--endpoint', '00000000-0000-4000-8000-000000000000'])).rejects.toThrow(
      /--create and --endpoint do not go together/,
    );
  });

  it('warns when nobody is listening', async () => {
    const lonely = await t.newOrg({ plan: 'max' });
    const sent = await trigger(['ping'], lonely.internalKey);
    expect(sent.code).toBe(0);
    expect(sent.stderr).toMatch(/nobody is listening/);
  });

  it('lists every event of the catalogue in --help', () => {
    for (const name of EVENT_NAMES) expect(triggerCommand.usage).toContain(name);
  });

  it('refuses an unknown event (with a hint), an unknown endpoint (exit 2) and a Public API key (exit 3)', async () => {
    await expect(trigger(['deal.wonn'])).rejects.toThrow(UsageError);
    await expect(trigger(['deal.wonn'])).rejects.toThrow(/did you mean 'deal.won'/);
    await expect(trigger([])).rejects.toThrow(/missing argument: event/);
    await expect(trigger(['ping', '--endpoint', 'abc'])).rejects.toThrow(/--endpoint must be a webhook endpoint id/);
    await expect(trigger(['ping', '--endpoint', '00000000-0000-4000-8000-000000000000'])).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/No webhook endpoint.*404 not_found/),
    });
    await expect(trigger(['ping'], org.publicKey)).rejects.toMatchObject({ exitCode: 3, message: expect.stringMatching(/Internal key/) });
  });
});
