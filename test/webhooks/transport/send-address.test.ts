import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../../packages/core/src/webhooks/transport/resolver.ts';
import { sendWebhook } from '../../../packages/core/src/webhooks/transport/send.ts';
import { signDelivery } from '../../../packages/core/src/webhooks/transport/signing.ts';
import { type Receiver, startReceiver, startSilentListener } from '../../support/receiver.ts';

const TLS_DIR = join(import.meta.dirname, '..', '..', 'support', 'fixtures', 'tls');

/** A resolver that gives `answers[n]` on its n-th call (the last one afterwards) and counts its calls. */
function scripted(...answers: string[][]): Resolver & { calls: number } {
  const fn = Object.assign(
    async (_host: string) => {
      const answer = answers[Math.min(fn.calls, answers.length - 1)] ?? [];
      fn.calls++;
      return answer;
    },
    { calls: 0 },
  );
  return fn;
}

function delivery(url: string) {
  const body = '{"event":"ping","data":{"message":"hello"}}';
  return {
    url,
    body,
    headers: signDelivery({
      body,
      secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
      messageId: 'd',
      attemptId: 'a',
      event: 'ping',
      at: new Date(),
    }),
  };
}

describe('sendWebhook: where it may connect', () => {
  let rx: Receiver;
  let rx6: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
    rx6 = await startReceiver({ host: '::1' });
  });
  afterAll(async () => {
    await rx.close();
    await rx6.close();
  });

  // allowLoopback is on for all of these: the development flag opens loopback and nothing else private.
  it.each([
    ['https://10.0.0.1/hook', [], /10\.0\.0\.1 is in the private range/],
    ['https://169.254.169.254/latest/meta-data/', [], /169\.254\.169\.254 is in the link-local range/],
    ['https://100.100.100.200/', [], /carrier-grade NAT/],
    ['https://[::ffff:10.0.0.1]/', [], /^10\.0\.0\.1 is in the private range/],
    ['https://[64:ff9b::a00:1]/', [], /^10\.0\.0\.1 is in the private range/],
    ['https://[fd00:ec2::254]/', [], /fd00:ec2::254 is in the unique-local range/],
    [
      'https://internal.example/',
      ['10.1.2.3'],
      /^internal\.example resolves to 10\.1\.2\.3 is in the private range; private and internal addresses are refused$/,
    ],
    ['https://mixed.example/', ['93.184.216.34', '10.0.0.1'], /^mixed\.example resolves to 10\.0\.0\.1/],
    ['https://v6.example/', ['2606:4700::1111', 'fe80::1'], /^v6\.example resolves to fe80::1 is in the link-local range/],
  ])('blocks %s (answers %j) without connecting', async (url, answers, reason) => {
    const resolver = scripted(answers);
    const r = await sendWebhook(delivery(url), { resolver, allowLoopback: true });
    expect(r).toMatchObject({ outcome: 'blocked', statusCode: null, responseBody: null });
    expect(r.error).toMatch(reason);
    expect(resolver.calls).toBe(answers.length === 0 ? 0 : 1);
  });

  it('a host name resolving to loopback AND a private address is blocked; the loopback receiver is never touched', async () => {
    const counter = await startSilentListener();
    try {
      const r = await sendWebhook(delivery(`https://receiver.test:${counter.port}/`), {
        resolver: scripted(['127.0.0.1', '10.0.0.1']),
        allowLoopback: true,
      });
      expect(r.outcome).toBe('blocked');
      expect(counter.connections()).toBe(0);
    } finally {
      await counter.close();
    }
  });

  it('loopback is blocked without allowLoopback (no connection) and reached with it', async () => {
    const counter = await startSilentListener();
    try {
      for (const url of [
        `https://127.0.0.1:${counter.port}/`,
        `https://receiver.test:${counter.port}/`,
        `https://[::ffff:127.0.0.1]:${counter.port}/`,
      ]) {
        const r = await sendWebhook(delivery(url), { resolver: scripted(['127.0.0.1']), allowLoopback: false });
        expect(r.outcome).toBe('blocked');
        expect(r.error).toMatch(/loopback/);
      }
      expect(counter.connections()).toBe(0);
    } finally {
      await counter.close();
    }
    const before = rx.requests.length;
    const r = await sendWebhook(delivery(`https://receiver.test:${rx.port}/`), { resolver: scripted(['127.0.0.1']), allowLoopback: true });
    expect(r.outcome).toBe('succeeded');
    expect(rx.requests.length - before).toBe(1);
  });

  it('DNS rebinding: resolves once and connects to the checked loopback address, never to the second answer', async () => {
    const resolver = scripted(['127.0.0.1'], ['10.0.0.1']);
    const before = rx.requests.length;
    const r = await sendWebhook(delivery(`https://receiver.test:${rx.port}/rebind`), { resolver, allowLoopback: true });
    expect(r).toMatchObject({ outcome: 'succeeded', statusCode: 200 });
    expect(resolver.calls).toBe(1);
    expect(rx.requests.slice(before).map((q) => q.url)).toEqual(['/rebind']);
  });

  it('DNS rebinding, reverse order: the first (private) answer blocks and the receiver it would rebind to is untouched', async () => {
    const counter = await startSilentListener();
    try {
      const resolver = scripted(['10.0.0.1'], ['127.0.0.1']);
      const r = await sendWebhook(delivery(`https://receiver.test:${counter.port}/`), { resolver, allowLoopback: true });
      expect(r.outcome).toBe('blocked');
      expect(r.error).toMatch(/^receiver\.test resolves to 10\.0\.0\.1/);
      expect(resolver.calls).toBe(1);
      expect(counter.connections()).toBe(0);
    } finally {
      await counter.close();
    }
  });

  it('a pooled keep-alive socket is only reused for the address the current check allowed', async () => {
    // The shared test receiver's 1 s keep-alive leaves the client nothing to reuse, so this server keeps sockets open.
    let connections = 0;
    const server = createHttpsServer(
      { key: readFileSync(join(TLS_DIR, 'receiver-key.pem')), cert: readFileSync(join(TLS_DIR, 'receiver.pem')) },
      (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200).end('ok'));
      },
    );
    server.keepAliveTimeout = 30_000;
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const url = `https://receiver.test:${port}/`;
      for (let i = 0; i < 3; i++) {
        expect((await sendWebhook(delivery(url), { resolver: scripted(['127.0.0.1']), allowLoopback: true })).outcome).toBe('succeeded');
        await new Promise((r) => setImmediate(r));
      }
      // Sequential deliveries share one socket (the throughput the pool is for)...
      expect(connections).toBe(1);
      // ...but the same host name and port checked to another address must not reuse it.
      const moved = await sendWebhook(delivery(url), { resolver: scripted(['127.0.0.2']), allowLoopback: true });
      expect(moved).toMatchObject({ outcome: 'failed', error: `connection refused by 127.0.0.2:${port}` });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('reaches an IPv6 loopback receiver with allowLoopback, by literal and by host name', async () => {
    const before = rx6.requests.length;
    const literal = await sendWebhook(delivery(`${rx6.origin}/six`), { resolver: scripted([]), allowLoopback: true });
    expect(literal).toMatchObject({ outcome: 'succeeded', statusCode: 200 });
    const named = await sendWebhook(delivery(`https://receiver.test:${rx6.port}/six`), {
      resolver: scripted(['::1']),
      allowLoopback: true,
    });
    expect(named).toMatchObject({ outcome: 'succeeded', statusCode: 200 });
    expect(rx6.requests.length - before).toBe(2);
    expect(rx6.requests.at(-2)?.headers.host).toBe(`[::1]:${rx6.port}`);
    expect(rx6.requests.at(-1)?.headers.host).toBe(`receiver.test:${rx6.port}`);
    expect((await sendWebhook(delivery(`${rx6.origin}/six`), { resolver: scripted([]), allowLoopback: false })).outcome).toBe('blocked');
  });

  it('refuses anything but https without resolving or connecting', async () => {
    for (const url of [`http://receiver.test:${rx.port}/`, 'ftp://receiver.test/', 'not a url']) {
      const resolver = scripted(['127.0.0.1']);
      const r = await sendWebhook(delivery(url), { resolver, allowLoopback: true });
      expect(r.outcome).toBe('blocked');
      expect(r.error).toMatch(/only https URLs|cannot be parsed/);
      expect(resolver.calls).toBe(0);
    }
  });

  it('a host name that does not resolve fails (retried later), it is not blocked', async () => {
    const nx: Resolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    expect(await sendWebhook(delivery('https://nowhere.example/'), { resolver: nx, allowLoopback: false })).toMatchObject({
      outcome: 'failed',
      statusCode: null,
      error: 'nowhere.example could not be resolved (ENOTFOUND)',
    });
    expect(await sendWebhook(delivery('https://empty.example/'), { resolver: scripted([]), allowLoopback: false })).toMatchObject({
      outcome: 'failed',
      error: 'empty.example has no addresses',
    });
  });

  it('a resolver that never answers is stopped by the same deadline', async () => {
    const hanging: Resolver = () => new Promise<string[]>(() => undefined);
    const r = await sendWebhook(delivery('https://slow-dns.example/'), { resolver: hanging, allowLoopback: false, timeoutMs: 300 });
    expect(r.outcome).toBe('failed');
    expect(r.error).toMatch(/^timed out after 0\.3 s resolving the host name/);
  });
});
