import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../../packages/core/src/webhooks/transport/resolver.ts';
import { sendWebhook } from '../../../packages/core/src/webhooks/transport/send.ts';
import { newSigningSecret } from '../../../packages/core/src/webhooks/transport/secret.ts';
import { signDelivery } from '../../../packages/core/src/webhooks/transport/signing.ts';
import { type Receiver, startReceiver, startSilentListener } from '../../support/receiver.ts';

/** `receiver.test` is in the test certificate: resolving it to loopback proves verification uses the host name. */
const toLoopback: Resolver = async (host) =>
  host === 'receiver.test' || host === 'other.test' ? ['127.0.0.1'] : Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }));
const loopback = { resolver: toLoopback, allowLoopback: true };

function delivery(url: string, body = '{"event":"ping","data":{"message":"hello"}}', secret = newSigningSecret()) {
  const headers = signDelivery({ body, secret, messageId: 'dlv_1', attemptId: 'att_1', event: 'ping', at: new Date() });
  return { url, body, headers, secret };
}

describe('sendWebhook: the exchange with a receiver', () => {
  let rx: Receiver;
  let untrusted: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
    untrusted = await startReceiver({ untrusted: true });
  });
  afterAll(async () => {
    await rx.close();
    await untrusted.close();
  });
  const url = (path = '/hooks') => `https://receiver.test:${rx.port}${path}`;
  const reply =
    (status: number, body = '', headers: Record<string, string> = {}) =>
    (_req: unknown, res: ServerResponse) => {
      res.writeHead(status, headers).end(body);
    };

  it('POSTs the exact signed bytes to the host name pinned at the checked address and succeeds on 200', async () => {
    rx.respond(reply(200, 'ok'));
    const before = rx.requests.length;
    const d = delivery(url('/hooks/in?tenant=7'), JSON.stringify({ event: 'contact.created', data: { contact: { firstName: 'Zoë' } } }));
    const ticks = [1_000, 1_042];
    const r = await sendWebhook(d, { ...loopback, now: () => ticks.shift() ?? 0 });
    const { requestHeaders, responseHeaders, ...rest } = r;
    expect(rest).toEqual({ outcome: 'succeeded', statusCode: 200, responseBody: 'ok', durationMs: 42, error: null });
    const got = rx.requests[before];
    // The delivery log's copy of the request's headers is what the receiver got, each one; of the answer's, its own.
    for (const [name, value] of Object.entries(requestHeaders!)) expect(got?.headers[name.toLowerCase()]).toBe(value);
    expect(Object.keys(requestHeaders!).map((n) => n.toLowerCase())).toEqual(
      expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'host', 'content-length']),
    );
    expect(responseHeaders).toContainEqual(['Connection', 'keep-alive']);
    expect(got?.method).toBe('POST');
    expect(got?.url).toBe('/hooks/in?tenant=7');
    expect(got?.headers.host).toBe(`receiver.test:${rx.port}`);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers['user-agent']).toBe('Leadwire-Webhooks/1.0');
    expect(got?.headers['content-length']).toBe(String(Buffer.byteLength(d.body)));
    expect(got?.rawBody.equals(Buffer.from(d.body, 'utf8'))).toBe(true);
    expect(got?.headers['x-webhook-signature']).toBe(
      createHmac('sha256', d.secret)
        .update(got?.rawBody ?? '')
        .digest('hex'),
    );
    for (const h of ['x-webhook-event', 'x-webhook-id', 'x-webhook-timestamp', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(got?.headers[h]).toBe(d.headers[Object.keys(d.headers).find((k) => k.toLowerCase() === h) ?? '']);
    }
  });

  it('any 2xx succeeds, an empty body included', async () => {
    rx.respond(reply(204));
    expect(await sendWebhook(delivery(url()), loopback)).toMatchObject({
      outcome: 'succeeded',
      statusCode: 204,
      responseBody: '',
      error: null,
    });
    rx.respond(reply(299, 'fine'));
    expect(await sendWebhook(delivery(url()), loopback)).toMatchObject({ outcome: 'succeeded', statusCode: 299, responseBody: 'fine' });
  });

  it.each([500, 404, 410, 300, 302, 301, 307])('a %i answer fails with its status and the start of its body', async (status) => {
    rx.respond(reply(status, `status ${status}`, { location: url('/elsewhere') }));
    const before = rx.requests.length;
    const r = await sendWebhook(delivery(url()), loopback);
    expect(r).toMatchObject({
      outcome: 'failed',
      statusCode: status,
      responseBody: `status ${status}`,
      error: `the receiver answered ${status}`,
    });
    // Redirects are never followed: the receiver saw exactly one request.
    expect(rx.requests.length - before).toBe(1);
  });

  it('fails without sending when the certificate is not trusted', async () => {
    const r = await sendWebhook(delivery(`https://127.0.0.1:${untrusted.port}/hooks`), loopback);
    expect(r).toMatchObject({ outcome: 'failed', statusCode: null, responseBody: null });
    expect(r.error).toMatch(/^TLS: the receiver's certificate is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN/);
    expect(untrusted.requests).toHaveLength(0);
  });

  it('checks the certificate against the URL host name, not the pinned address', async () => {
    // other.test resolves to the same receiver, whose certificate does not name it.
    const before = rx.requests.length;
    const r = await sendWebhook(delivery(`https://other.test:${rx.port}/hooks`), loopback);
    expect(r.outcome).toBe('failed');
    expect(r.error).toMatch(/^TLS: the certificate does not match the host name .*other\.test/);
    expect(rx.requests.length).toBe(before);
  });

  it('times out when the receiver never answers', async () => {
    rx.respond(() => undefined);
    const before = rx.requests.length;
    const r = await sendWebhook(delivery(url()), { ...loopback, timeoutMs: 300 });
    expect(r).toMatchObject({
      outcome: 'failed',
      statusCode: null,
      responseBody: null,
      error: 'timed out after 0.3 s waiting for the response',
    });
    expect(rx.requests.length - before).toBe(1);
  });

  it('times out when the TLS handshake never completes (the deadline covers connecting)', async () => {
    const silent = await startSilentListener();
    try {
      const r = await sendWebhook(delivery(`https://receiver.test:${silent.port}/`), { ...loopback, timeoutMs: 300 });
      expect(r).toMatchObject({ outcome: 'failed', statusCode: null, error: 'timed out after 0.3 s waiting for the response' });
      expect(silent.connections()).toBe(1);
    } finally {
      await silent.close();
    }
  });

  it('times out when a 2xx body trickles past the deadline (the deadline covers the body)', async () => {
    rx.respond((_req, res) => {
      res.writeHead(200);
      res.write('a');
      // One byte now and then, never ending: only the deadline stops it. Stopped when the sender hangs up.
      const t = setInterval(() => res.write('b'), 50);
      res.on('close', () => clearInterval(t));
    });
    const r = await sendWebhook(delivery(url()), { ...loopback, timeoutMs: 300 });
    expect(r).toMatchObject({ outcome: 'failed', statusCode: 200, error: 'timed out after 0.3 s reading the response body' });
  });

  it('keeps the first 1,024 characters of a huge body', async () => {
    rx.respond(reply(500, 'x'.repeat(1_000_000)));
    const r = await sendWebhook(delivery(url()), loopback);
    expect(r.statusCode).toBe(500);
    expect(r.responseBody).toBe('x'.repeat(1_024));
  });

  it('counts characters, not bytes or UTF-16 units, and never splits one', async () => {
    rx.respond(reply(200, 'é'.repeat(3_000)));
    expect((await sendWebhook(delivery(url()), loopback)).responseBody).toBe('é'.repeat(1_024));
    rx.respond(reply(200, '🚀'.repeat(3_000)));
    expect((await sendWebhook(delivery(url()), loopback)).responseBody).toBe('🚀'.repeat(1_024));
    rx.respond(reply(200, `a${'€'.repeat(1_022)}🚀🚀🚀`));
    expect((await sendWebhook(delivery(url()), loopback)).responseBody).toBe(`a${'€'.repeat(1_022)}🚀`);
  });

  it('stores NUL bytes of a hostile body as U+FFFD (PostgreSQL text cannot hold NUL)', async () => {
    rx.respond(reply(400, 'bad\0request'));
    expect((await sendWebhook(delivery(url()), loopback)).responseBody).toBe('bad\uFFFDrequest');
  });

  it('hangs up on a body that streams forever instead of reading it', async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    let sent = 0;
    rx.respond((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'z');
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      };
      res.on('drain', pump);
      res.on('close', () => closed());
      pump();
    });
    // A generous deadline: the result must come from the byte cap, not from the time-out.
    const r = await sendWebhook(delivery(url()), { ...loopback, timeoutMs: 20_000 });
    expect(r).toMatchObject({ outcome: 'succeeded', statusCode: 200, responseBody: 'z'.repeat(1_024), error: null });
    await serverSawClose;
    expect(sent).toBeLessThan(10 * 1024 * 1024);
  });

  it('reports a refused connection readably', async () => {
    const gone = await startSilentListener();
    const port = gone.port;
    await gone.close();
    const r = await sendWebhook(delivery(`https://receiver.test:${port}/`), loopback);
    expect(r).toMatchObject({ outcome: 'failed', statusCode: null, error: `connection refused by 127.0.0.1:${port}` });
  });
});
