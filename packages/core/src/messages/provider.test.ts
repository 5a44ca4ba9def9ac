import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import type { Logger } from '../context.ts';
import { HttpSmsProvider, LogSmsProvider, SmsSendError, smsProviderFor } from './provider.ts';

let server: Server;
let url: string;
let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
});
afterAll(async () => new Promise((resolve) => server.close(resolve)));

const message = { to: '+15550100000', from: '+15550000000', body: 'Hi there' };

describe('HttpSmsProvider', () => {
  it('posts the text as JSON with the API key and returns the gateway id', async () => {
    let seen: { auth: string | undefined; type: string | undefined; body: unknown } | undefined;
    handler = (req, body, res) => {
      seen = { auth: req.headers.authorization, type: req.headers['content-type'], body: JSON.parse(body) };
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"id":"SM123"}');
    };
    expect(await new HttpSmsProvider({ url, apiKey: 'key-1' }).send(message)).toEqual({ providerMessageId: 'SM123' });
    expect(seen).toEqual({ auth: 'Bearer key-1', type: 'application/json', body: message });
  });

  it('fails on a refusal, an answer without an id, or a timeout, never naming the key', async () => {
    const provider = new HttpSmsProvider({ url, apiKey: 'secret-key-xyz', timeoutMs: 200 });
    handler = (_req, _body, res) => res.writeHead(401).end('bad key secret-key-xyz');
    const refused = await provider.send(message).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SmsSendError);
    expect((refused as SmsSendError).status).toBe(401);
    expect(String((refused as Error).message)).not.toContain('secret-key-xyz');

    handler = (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    await expect(provider.send(message)).rejects.toThrow(/without a message id/);

    handler = () => {};
    await expect(provider.send(message)).rejects.toThrow(/timed out/);
  });
});

describe('LogSmsProvider', () => {
  it('sends nothing and keeps the body out of the info log', async () => {
    const lines: { level: string; obj: object }[] = [];
    const log: Logger = {
      info: (obj) => lines.push({ level: 'info', obj }),
      warn: (obj) => lines.push({ level: 'warn', obj }),
      error: (obj) => lines.push({ level: 'error', obj }),
      debug: (obj) => lines.push({ level: 'debug', obj }),
    };
    const { providerMessageId } = await new LogSmsProvider(log).send(message);
    expect(providerMessageId).toMatch(/^log-/);
    const info = lines.filter((l) => l.level === 'info');
    expect(info).toHaveLength(1);
    expect(JSON.stringify(info)).not.toContain('Hi there');
    expect(JSON.stringify(lines.filter((l) => l.level === 'debug'))).toContain('Hi there');
  });
});

describe('SMS configuration', () => {
  it('defaults to the log provider', () => {
    const config = loadConfig({});
    expect(config.SMS_PROVIDER).toBe('log');
    const log = { info() {}, warn() {}, error() {}, debug() {} };
    expect(smsProviderFor(config, log)).toBeInstanceOf(LogSmsProvider);
    expect(smsProviderFor(loadConfig({ SMS_PROVIDER: 'http', SMS_PROVIDER_URL: url }), log)).toBeInstanceOf(HttpSmsProvider);
  });

  it('stops at boot when the http provider has no URL, or the inbound secret is too short', () => {
    let err: unknown;
    try {
      loadConfig({ SMS_PROVIDER: 'http' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual(['SMS_PROVIDER_URL: is required when SMS_PROVIDER is http']);
    expect(() => loadConfig({ SMS_INBOUND_SECRET: 'short' })).toThrow(/SMS_INBOUND_SECRET/);
  });
});
