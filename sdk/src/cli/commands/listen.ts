import { createParser } from 'eventsource-parser';
import { forwardUrl, positionals } from '../args.ts';
import type { CliContext, Command } from '../context.ts';
import { CliError, cliErrorOf, ExitCode, UsageError } from '../exit-codes.ts';
import { checkEvent } from '../listen/events.ts';
import { forward, recordIdOf, type StreamedDelivery } from '../listen/forward.ts';
import { SECRET_ENV, type StartedReceiver, startReceiver } from '../listen/receiver.ts';
import { messages } from '../output.ts';
import { pause } from '../pause.ts';
import { connectionOf, connectionUsage, parseCommand } from '../options.ts';

const USAGE = `Usage: leadwire listen --forward-to <url> [options] [-- <receiver command…>]

Streams your organization's webhook deliveries from the server and posts each one to a local
receiver with the exact headers and body bytes a webhook endpoint would get, signed with a
listen secret that stays the same every time you listen (one per person and organization).
No tunnel is needed, even when the server is remote. Needs an Internal key of an owner or admin.

After --, the command of your receiver: listen starts it once the stream is ready, with the secret
in its environment as LEADWIRE_WEBHOOK_SECRET, forwards once it accepts connections, shows its
output on stderr and stops it when listening stops (and stops listening if it exits).

Options:
  --forward-to <url>  the receiver, http:// or https://, e.g. http://localhost:4000/hook
  --events <a,b>      only these events (default: every event; see \`leadwire trigger --help\`)
${connectionUsage('internal', 22)}

Prints "Ready. Your webhook signing secret is whsec_…" once connected, then a line per event on
stderr (time, event, record id, the receiver's status and time) and the same as JSON on stdout.
A receiver that is down is reported and listening goes on; a dropped connection is retried with
backoff and resumes where it stopped. Ctrl-C stops listening (exit 0).
Exit codes: 0 stopped; 2 usage error; 3 key missing or refused; 4 the server refused the stream,
or the receiver started after -- exited.

Example:
  leadwire listen --forward-to http://localhost:4000/hook --events contact.created,deal.won
  leadwire listen --forward-to http://localhost:4000/hook -- node docs/examples/receiver.mjs
  leadwire trigger contact.created     # in another terminal
`;

/** Reconnection delays: doubling from 0.5 s up to 15 s, with jitter so many clients do not return in step. */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 15_000;

const backoff = (attempt: number) => {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
};

interface Ready {
  secret: string;
  events: string[] | null;
  resumed: boolean | null;
}

export const listenCommand: Command = {
  name: 'listen',
  summary: 'forward webhook deliveries to a local receiver, signed with a stable secret',
  usage: USAGE,
  async run(ctx, argv) {
    // Everything after the first -- is the receiver's command, passed on as it is (its own options included).
    const separator = argv.indexOf('--');
    const receiver = separator < 0 ? undefined : argv.slice(separator + 1);
    if (receiver?.length === 0) throw new UsageError('-- must be followed by the command that starts your receiver');
    const { values, positionals: rest } = parseCommand(separator < 0 ? argv : argv.slice(0, separator), {
      'forward-to': { type: 'string' },
      events: { type: 'string' },
    });
    positionals(rest, []);
    const forwardTo = values['forward-to'];
    if (!forwardTo) throw new UsageError('--forward-to is required: the local receiver, e.g. http://localhost:4000/hook');
    const target = forwardUrl(forwardTo);
    const events = values.events
      ?.split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '')
      .map((e) => checkEvent(e, '--events'));
    const { apiKey, baseUrl } = await connectionOf(ctx, values, 'internal');
    const url = `${baseUrl}/webhooks/listen${events?.length ? `?events=${encodeURIComponent(events.join(','))}` : ''}`;
    await listen(ctx, { url, apiKey, target, receiver });
    return ExitCode.ok;
  },
};

/**
 * Connects, streams and forwards until interrupted (or until the receiver it started exits); reconnects (resuming)
 * whenever the stream drops.
 */
async function listen(outer: CliContext, opts: { url: string; apiKey: string; target: string; receiver?: string[] | undefined }) {
  // The receiver's exit stops listening as Ctrl-C does: one signal for both.
  const receiverGone = new AbortController();
  const ctx: CliContext = { ...outer, signal: AbortSignal.any([outer.signal, receiverGone.signal]) };
  const say = messages(ctx);
  let secret: string | null = null;
  let lastEventId = '';
  let failures = 0;
  let receiver: StartedReceiver | undefined;
  let receiverEnded: string | undefined;
  const startOnce = (withSecret: string) => {
    if (!opts.receiver || receiver) return;
    const started = startReceiver(ctx, opts.receiver, withSecret, opts.target);
    receiver = started;
    const shown = opts.receiver.join(' ');
    void started.exited.then((reason) => {
      if (outer.signal.aborted) return;
      receiverEnded = `the receiver \`${shown}\` ended (${reason}); listening stopped`;
      receiverGone.abort();
    });
    void started.ready.then(() => {
      if (!ctx.signal.aborted) say.info(`Started \`${shown}\` with ${SECRET_ENV} set to the secret; forwarding to it.`);
    });
  };
  try {
    await loop();
  } finally {
    await receiver?.stop();
  }
  if (receiverEnded) throw new CliError(ExitCode.server, receiverEnded);

  async function loop() {
    while (!ctx.signal.aborted) {
      let res: Response;
      try {
        res = await ctx.fetch(opts.url, {
          headers: {
            authorization: `Bearer ${opts.apiKey}`,
            accept: 'text/event-stream',
            ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
          },
          signal: ctx.signal,
        });
      } catch (err) {
        if (ctx.signal.aborted) break;
        const wait = backoff(failures++);
        say.warn(
          `cannot reach ${opts.url} (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}); retrying in ${(wait / 1000).toFixed(1)} s`,
        );
        await pause(wait, ctx.signal);
        continue;
      }
      if (!res.ok) {
        const body = (await res.json().catch(() => ({}))) as { error?: string; code?: string; required?: unknown };
        const refusal = {
          status: res.status,
          code: body.code ?? 'http_error',
          message: body.error ?? res.statusText,
          required: body.required,
        };
        if (res.status === 400) throw new UsageError(refusal.message);
        if (res.status === 401 || res.status === 403) throw cliErrorOf(refusal, 'internal');
        if (res.status !== 429 && res.status < 500)
          throw new CliError(ExitCode.server, `the server refused the stream (${res.status} ${refusal.code}): ${refusal.message}`);
        const wait = Math.max(backoff(failures++), Number(res.headers.get('retry-after') ?? 0) * 1000);
        say.warn(`the server answered ${res.status} ${refusal.code}; retrying in ${(wait / 1000).toFixed(1)} s`);
        await pause(wait, ctx.signal);
        continue;
      }
      const ended = await stream(ctx, res, {
        onReady: (ready) => {
          failures = 0;
          if (ready.secret !== secret) {
            secret = ready.secret;
            say.info(`Ready. Your webhook signing secret is ${ready.secret} (forwarding to ${opts.target}; Ctrl-C to stop)`);
            startOnce(ready.secret);
          } else say.info('Reconnected.');
          if (ready.resumed === false) say.warn('events sent while disconnected could not be replayed; some may have been missed');
        },
        onDelivery: async (d) => {
          lastEventId = d.id;
          if (ctx.signal.aborted) return;
          await receiver?.ready;
          const result = await forward(ctx.fetch, opts.target, d, ctx.signal);
          if (ctx.signal.aborted) return;
          const at = new Date().toISOString();
          const recordId = recordIdOf(d.body);
          const outcome = result.status === null ? `failed: ${result.error}` : `${result.status}`;
          say.info(`${at}  ${d.event.padEnd(24)} ${recordId}  -> ${outcome} (${result.durationMs} ms)`);
          ctx.stdout.write(`${JSON.stringify({ at, id: d.id, event: d.event, recordId, ...result })}\n`);
        },
      });
      if (ctx.signal.aborted) break;
      const wait = backoff(failures++);
      say.warn(`stream ended (${ended}); reconnecting in ${(wait / 1000).toFixed(1)} s`);
      await pause(wait, ctx.signal);
    }
  }
}

/** Reads one stream to its end; deliveries are forwarded one at a time, in order. Returns why it ended. */
async function stream(
  ctx: CliContext,
  res: Response,
  on: { onReady(ready: Ready): void; onDelivery(d: StreamedDelivery): Promise<void> },
): Promise<string> {
  let ending = 'connection closed';
  let queue = Promise.resolve();
  // Every delivery carries its event id (the server's frames), which is the Last-Event-ID to resume from.
  const parser = createParser({
    onEvent: (e) => {
      if (e.event === 'ready') on.onReady(JSON.parse(e.data) as Ready);
      else if (e.event === 'end') ending = (JSON.parse(e.data) as { reason: string }).reason;
      else if (e.event === 'delivery') {
        const d = { id: e.id ?? '', ...(JSON.parse(e.data) as Omit<StreamedDelivery, 'id'>) };
        queue = queue.then(() => on.onDelivery(d));
      }
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  } catch (err) {
    if (!ctx.signal.aborted) ending = `read failed: ${(err as Error).message}`;
  }
  await queue;
  return ending;
}
