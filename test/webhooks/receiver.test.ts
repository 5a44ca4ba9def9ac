import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver.ts';

function post(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The test receivers are what every webhook test relies on: trusted through NODE_EXTRA_CA_CERTS, raw bytes kept.
describe('test HTTPS receiver', () => {
  let trusted: Receiver;
  let untrusted: Receiver;
  beforeAll(async () => {
    trusted = await startReceiver();
    untrusted = await startReceiver({ untrusted: true });
  });
  afterAll(async () => {
    await trusted.close();
    await untrusted.close();
  });

  it('is trusted through the test CA and records the exact bytes', async () => {
    const body = '{"a":"\u00e9"}';
    expect(await post(`${trusted.origin}/hook`, body)).toEqual({ status: 200, text: 'ok' });
    const [got] = await trusted.waitFor(1);
    expect(got?.rawBody.equals(Buffer.from(body))).toBe(true);
    expect(got?.url).toBe('/hook');
  });

  it('refuses a certificate outside the test CA', async () => {
    await expect(post(`${untrusted.origin}/hook`, '{}')).rejects.toThrow(/self-signed|certificate/i);
    expect(untrusted.requests).toHaveLength(0);
  });
});
