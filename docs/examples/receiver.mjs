// A webhook receiver for trying Leadwire's deliveries on your own machine (docs/webhooks.md, "Receiving real
// deliveries on your machine"). It verifies the Standard Webhooks signature with node:crypto alone, so it runs with any
// Node 20+ and no install; in your own code, `verifyWebhook` from `@leadwire/sdk/webhooks` does the same.
//
//   PORT                     where it listens (default 4000); the path is /hook
//   LEADWIRE_WEBHOOK_SECRET  the endpoint's or the listen session's secret (whsec_…); without it nothing is verified
//   TLS_CERT, TLS_KEY        PEM files: serve HTTPS (what a webhook endpoint needs); without them plain HTTP, enough
//                            behind `leadwire listen`
//
// It prints one line per delivery: the event, the contact's email when there is one, and whether the signature held.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';

const secret = process.env.LEADWIRE_WEBHOOK_SECRET;
const tls =
  process.env.TLS_CERT && process.env.TLS_KEY ? { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) } : null;
const port = Number(process.env.PORT ?? 4000);

/** Standard Webhooks: HMAC-SHA256 of "id.timestamp.body" keyed with the secret's base64 part, at most 5 minutes old. */
function verify(headers, body) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return 'the webhook-* headers are missing';
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return 'the timestamp is more than 5 minutes off';
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64'));
  // During a secret rotation two signatures come, space-separated: either may match.
  const match = signatures.split(' ').some((s) => {
    const given = Buffer.from(s.replace(/^v1,/, ''));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return match ? null : 'no signature matches';
}

const handler = async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  if (req.method !== 'POST' || req.url !== '/hook') return res.writeHead(404).end();
  const problem = secret ? verify(req.headers, body) : null;
  const payload = JSON.parse(body.toString('utf8'));
  const who = payload.data?.contact?.email ?? '';
  console.log(`${payload.event} ${who} ${secret ? (problem ? `NOT verified: ${problem}` : 'verified') : 'unverified'}`.replace('  ', ' '));
  res.writeHead(problem ? 400 : 200).end(problem ?? 'ok');
};

const server = tls ? createHttps(tls, handler) : createHttp(handler);
server.listen(port, () => console.log(`listening on ${tls ? 'https' : 'http'}://localhost:${port}/hook`));
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close());
