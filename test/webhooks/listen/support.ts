import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { TestApp } from '../../support/app.ts';
import { waiter } from '../../support/waiter.ts';

export interface Delivery {
  id: string;
  event: string;
  headers: Record<string, string>;
  body: string;
}

export interface Stream {
  status: number;
  headers: Headers;
  /** The JSON body of a refused stream. */
  error?: { error: string; code: string };
  ready: { secret: string; events: string[] | null; resumed: boolean | null };
  events: EventSourceMessage[];
  heartbeats: number;
  /** The next `delivery` event after the ones already taken (waits for it). */
  nextDelivery(timeoutMs?: number): Promise<Delivery>;
  /** Resolves once `n` heartbeat comments have arrived in total. */
  heartbeatsReached(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `GET /api/webhooks/listen` with fetch and parses the stream as the CLI does; waits for the ready event. */
export async function openStream(t: TestApp, key: string, opts: { events?: string; lastEventId?: string } = {}): Promise<Stream> {
  const abort = new AbortController();
  const url = `${t.origin}/api/webhooks/listen${opts.events === undefined ? '' : `?events=${encodeURIComponent(opts.events)}`}`;
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}) },
    signal: abort.signal,
  });
  const events: EventSourceMessage[] = [];
  let heartbeats = 0;
  let taken = 0;
  const { wake, until: waitFor } = waiter();
  const until = (ok: () => boolean, what: string, timeoutMs: number) =>
    waitFor(ok, () => `${what} did not happen within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event))}`, timeoutMs);
  const base = { status: res.status, headers: res.headers, events, close: () => abort.abort() };
  if (res.status !== 200) {
    const error = (await res.json()) as { error: string; code: string };
    return {
      ...base,
      error,
      ready: undefined as never,
      heartbeats: 0,
      nextDelivery: () => Promise.reject(new Error('refused')),
      heartbeatsReached: () => Promise.reject(new Error('refused')),
      ended: Promise.resolve(),
    };
  }
  const parser = createParser({
    onEvent: (e) => {
      events.push(e);
      wake();
    },
    onComment: () => {
      heartbeats++;
      wake();
    },
  });
  let done = false;
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted by the test
    }
    done = true;
    wake();
  })();
  await until(() => events.length > 0 || done, 'the ready event', 10_000);
  const first = events[0];
  if (first?.event !== 'ready') throw new Error(`expected the ready event first, got ${JSON.stringify(first)}`);
  const stream: Stream = {
    ...base,
    ready: JSON.parse(first.data) as Stream['ready'],
    get heartbeats() {
      return heartbeats;
    },
    nextDelivery: async (timeoutMs = 10_000) => {
      const index = () => events.findIndex((e, i) => i > taken && e.event === 'delivery');
      await until(() => index() >= 0, 'a delivery', timeoutMs);
      const at = index();
      taken = at;
      const e = events[at]!;
      return { id: e.id ?? '', ...(JSON.parse(e.data) as Omit<Delivery, 'id'>) };
    },
    heartbeatsReached: (n, timeoutMs = 10_000) => until(() => heartbeats >= n, `${n} heartbeats`, timeoutMs),
    ended,
  };
  return stream;
}
