/**
 * The connection guard on a bare Node HTTP server, with real sockets and a clock the test moves by hand: what it must
 * not count against a client (time the server itself was not reading) and whom it sheds first.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RawClient } from '../../../../test/support/raw-http.ts';
import { type CloseReason, ConnectionGuard, type GuardLimits } from './connection-guard.ts';

const LIMITS: GuardLimits = {
  shedAt: 1_000,
  shedMinAgeMs: 100,
  perAddress: 1_000,
  perAddressAtAccept: true,
  bodyGraceMs: 1_000,
  bodyMinRate: 1_000,
  bodyIdleMs: 200,
};

let server: Server | undefined;
let guard: ConnectionGuard | undefined;
const clients: RawClient[] = [];
afterEach(async () => {
  clients.splice(0).forEach((c) => c.close());
  guard?.stop();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A server whose handler the test drives, guarded on a hand-moved clock; closings are recorded, not answered. */
async function start(limits: Partial<GuardLimits>, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const clock = { ms: 0 };
  const closed: CloseReason[] = [];
  server = createServer(handler);
  guard = new ConnectionGuard(
    { ...LIMITS, ...limits },
    (socket, _res, reason) => {
      closed.push(reason);
      socket.destroy();
    },
    () => clock.ms,
  );
  const g = guard;
  server.on('connection', (socket) => g.accept(socket));
  server.on('request', (req, res) => g.request(req, res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const connect = async (from: string) => {
    const c = await RawClient.connect(origin, from);
    clients.push(c);
    return c;
  };
  return { clock, closed, guard: g, connect };
}

async function until(done: () => boolean) {
  for (const deadline = Date.now() + 5_000; !done(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > deadline) throw new Error('condition not reached in 5 s');
  }
}

describe('body rules', () => {
  it('do not hold against a client the time the server was not reading its body', async () => {
    let pending: IncomingMessage | undefined;
    const { clock, closed, guard, connect } = await start({}, (req, res) => {
      pending = req;
      req.on('end', () => res.end('read'));
    });
    const c = await connect('127.0.6.1');
    const body = 'x'.repeat(4 * 1024 * 1024);
    c.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    // The handler reads nothing yet: Node stops reading the socket once the request's buffer is full.
    await until(() => pending?.socket.isPaused() === true);
    guard.sweep();
    // Ten idle time-outs and past the grace, in sweeps at their usual pace: nothing arrives, and nothing is cut.
    for (let i = 0; i < 80; i++) {
      clock.ms += 25;
      guard.sweep();
    }
    expect(closed).toEqual([]);
    pending!.resume();
    expect((await c.response())?.body).toBe('read');
  });

  it('do not hold a blocked event loop against a client, but cut a stalled body on the sweeps after it', async () => {
    let pending: IncomingMessage | undefined;
    const { clock, closed, guard, connect } = await start({}, (req) => (pending = req));
    const c = await connect('127.0.6.2');
    const bytes = 'POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\na';
    c.write(bytes);
    await until(() => pending?.socket.bytesRead === bytes.length);
    guard.sweep();
    // One sweep ten seconds late: the server read nothing meanwhile, so the client is not blamed for the silence.
    clock.ms += 10_000;
    guard.sweep();
    expect(closed).toEqual([]);
    for (let i = 0; i < 10 && !closed.length; i++) {
      clock.ms += 25;
      guard.sweep();
    }
    expect(closed).toEqual(['body_timeout']);
    await c.closedByServer();
  });
});

describe('shedding', () => {
  it('closes the connections that sent the least, never one being answered nor a newcomer', async () => {
    const answers: ServerResponse[] = [];
    const { clock, closed, guard, connect } = await start({ shedAt: 3 }, (req, res) => {
      if (req.method === 'GET') answers.push(res);
    });
    const silent = await connect('127.0.7.1');
    const trickle = await connect('127.0.7.2');
    trickle.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\nab');
    const waiting = await connect('127.0.7.3');
    waiting.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => answers.length === 1 && guard.open === 3);
    clock.ms += 10 * LIMITS.shedMinAgeMs;

    // Over the mark by one: the connection that never sent a byte goes first.
    const newcomer = await connect('127.0.7.4');
    await silent.closedByServer();
    expect(closed).toEqual(['shed']);
    // Over again: the trickle is next; the request being answered and the newcomer stay.
    const another = await connect('127.0.7.5');
    await trickle.closedByServer();
    expect(closed).toEqual(['shed', 'shed']);
    expect([waiting.closed, newcomer.closed, another.closed]).toEqual([false, false, false]);
    answers[0]!.end('done');
    expect((await waiting.response())?.body).toBe('done');
  });
});
