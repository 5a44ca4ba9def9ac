import type { OutgoingHttpHeaders } from 'node:http';
import { type Deps, toPublicError } from '@leadwire/core';
import { authenticateInternal, existingListenHub, listenHubOf, parseListenEvents, requireRole } from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { logFailure } from './log-failure.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // Proxies that buffer responses (nginx) would hold the events back; this asks them not to.
  'x-accel-buffering': 'no',
};

/** Headers Fastify collected for the reply (x-request-id, rate limits) plus `extra`, for a hijacked response. */
function headersOf(reply: FastifyReply, extra: Record<string, string | number>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries({ ...reply.getHeaders(), ...extra })) if (value !== undefined) out[name] = value;
  return out;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * `GET /api/webhooks/listen?events=a,b`: the organization's deliveries as Server-Sent Events, for `leadwire listen`
 * (frames: packages/core/src/webhooks/listen/frames.ts). Sessions and Internal keys of owners and admins, like the
 * endpoints themselves; a Public API key gets 403 wrong_api_surface. The stream runs until the client goes away or the
 * server shuts down (it is ended with `event: end` before the server closes, so shutdown never waits on it).
 * A request is complete once its headers are in, so the request and header time-outs do not apply to the open stream;
 * the keep-alive time-out only starts after a response ends. Heartbeats keep proxies from seeing it idle.
 */
export async function listenPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  app.addHook('preClose', async () => {
    await existingListenHub(deps)?.shutdown();
  });

  app.get(
    '/webhooks/listen',
    { exposeHeadRoute: false },
    async (req: FastifyRequest<{ Querystring: { events?: string | string[] } }>, reply: FastifyReply) => {
      const actor = await authenticateInternal(
        deps,
        deps.db,
        (name) => one(req.headers[name]),
        (name, value) => void reply.header(name, value),
      );
      requireRole(actor, 'owner', 'admin');
      const events = parseListenEvents(one(req.query.events));
      const lastEventId = one(req.headers['last-event-id']);

      const raw = reply.raw;
      reply.hijack();
      let gone = false;
      let stream: { close(): void } | undefined;
      const opened = performance.now();
      raw.on('close', () => {
        gone = true;
        stream?.close();
        // Fastify's own request line is not written for a hijacked reply: one line when the stream ends instead.
        req.log.info(
          { path: '/api/webhooks/listen', status: raw.statusCode, ms: Math.round(performance.now() - opened), org: actor.orgId },
          'listen stream closed',
        );
      });
      // Once the client is gone nothing more is written: a write to a destroyed response would only raise an error.
      const sink = {
        write: (chunk: string) => {
          if (gone || raw.writableEnded) return;
          if (!raw.headersSent) raw.writeHead(200, headersOf(reply, STREAM_HEADERS));
          raw.write(chunk);
        },
        buffered: () => raw.writableLength,
        end: () => {
          if (!raw.writableEnded) raw.end();
        },
      };
      try {
        stream = await listenHubOf(deps).open(actor, { events, ...(lastEventId && UUID.test(lastEventId) ? { lastEventId } : {}) }, sink);
        if (gone) stream.close();
      } catch (err) {
        const pub = toPublicError(err);
        logFailure(req.log, err, pub, 'listen stream not opened');
        if (raw.headersSent || gone) return void raw.destroy();
        raw.writeHead(pub.status, headersOf(reply, { ...pub.headers, 'content-type': 'application/json; charset=utf-8' }));
        raw.end(JSON.stringify({ ...pub.body, requestId: String(req.id) }));
      }
    },
  );
}
