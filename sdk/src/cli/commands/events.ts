import { resolve } from 'node:path';
import type { FeedEvent } from '../../client/types.ts';
import { forwardUrl, positionals } from '../args.ts';
import type { Command } from '../context.ts';
import { ExitCode, UsageError } from '../exit-codes.ts';
import { isSecret, newSecret } from '../events/sign.ts';
import { defaultStatePath, loadState, prepareState, saveState, type TailState } from '../events/state.ts';
import { POLL_MAX_MS, POLL_MIN_MS, tail } from '../events/tail.ts';
import { checkEvent } from '../listen/events.ts';
import { maskKey, messages } from '../output.ts';
import { pause } from '../pause.ts';
import { connectionOf, connectionUsage, PAGE_SIZE_OPTION, pageSizeOf, parseCommand } from '../options.ts';

const USAGE = `Usage: leadwire events tail [options]

Follows your workspace's changes feed (GET /v1/events): every event in commit order, delivered
as a webhook or not. Prints each event as a JSON line on stdout, or posts it to a receiver
signed like a webhook delivery. Once caught up it polls again after ${POLL_MIN_MS / 1000} s, waiting longer
(up to ${POLL_MAX_MS / 1000} s) while nothing happens. After each event it saves its place in a state file, so
that a restart resumes with the next event: none repeated, none skipped. Needs a Public API key
with events:read (or contacts:read for the contact.* events only).

Options:
  --after <where>     where to start: a cursor (the state file's, or a page's nextCursor), now,
                      or start (the oldest event kept). Default: the saved place, else now
  --types <a,b>       only these events (see \`leadwire trigger --help\` for the names)
  --forward-to <url>  post each event there instead of printing it, with the headers and
                      signatures of a webhook delivery; an event counts as handled once the
                      receiver answers 2xx, and is posted again until then (0.5 s doubling to 15 s)
  --secret <whsec_…>  the secret to sign with (default LEADWIRE_WEBHOOK_SECRET, else one made on
                      the first run, printed, and kept in the state file)
  --state <file>      the state file (default: one per server and key in the config folder,
                      events-tail/<id>.json)
  --page-size <n>     events per request, 1-100 (default 100)
${connectionUsage('public', 22)}

Ctrl-C stops (exit 0); an event being posted when it comes is posted again by the next run.
Exit codes: 0 stopped; 2 usage error or a cursor the server refused; 3 key missing or refused
(401, 403: the message names the permission); a server or network failure is retried.

Examples:
  leadwire events tail --types contact.created,contact.deleted | jq .data.contact.email
  leadwire events tail --after start --forward-to http://localhost:4000/hook
`;

export const eventsCommand: Command = {
  name: 'events',
  summary: 'follow the changes feed (events tail), printing or forwarding each event',
  usage: USAGE,
  async run(ctx, argv) {
    const { values, positionals: rest } = parseCommand(argv, {
      after: { type: 'string' },
      types: { type: 'string' },
      'forward-to': { type: 'string' },
      secret: { type: 'string' },
      state: { type: 'string' },
      ...PAGE_SIZE_OPTION,
    });
    const [sub] = positionals(rest, ['subcommand (tail)']);
    if (sub !== 'tail') throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}: leadwire events tail`);
    const types = values.types
      ?.split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '')
      .map((e) => checkEvent(e, '--types') as FeedEvent['event']);
    const target = values['forward-to'] === undefined ? undefined : forwardUrl(values['forward-to']);
    const given = values.secret ?? ctx.env.LEADWIRE_WEBHOOK_SECRET;
    if (given !== undefined && !isSecret(given))
      throw new UsageError('--secret (or LEADWIRE_WEBHOOK_SECRET) must be a signing secret: whsec_ and base64, as the server gives them');
    const pageSize = pageSizeOf(values);
    if (values.after !== undefined && !/^[A-Za-z0-9_.-]{1,200}$/.test(values.after))
      throw new UsageError('--after takes a cursor as the feed or the state file gives it, now, or start');
    const { apiKey, baseUrl } = await connectionOf(ctx, values, 'public');

    const say = messages(ctx);
    const now = ctx.now ?? (() => Date.now());
    const statePath = values.state ? resolve(ctx.cwd, values.state) : defaultStatePath(ctx.configDir, baseUrl, apiKey);
    const saved = await loadState(statePath);
    const start = values.after === 'start' ? undefined : (values.after ?? (saved ? (saved.cursor ?? undefined) : 'now'));
    const secret = target ? (given ?? saved?.secret ?? newSecret()) : undefined;
    const state: Omit<TailState, 'updatedAt'> = { version: 1, baseUrl, key: maskKey(apiKey), cursor: start ?? null };
    // Kept only when the command made it: a secret given on the command line stays where the user keeps it.
    if (secret && !given) state.secret = secret;
    else if (saved?.secret) state.secret = saved.secret;
    await prepareState(statePath, state, now());

    const from =
      values.after !== undefined
        ? ({ start: 'the oldest event kept', now: 'now' }[values.after] ?? 'the cursor given')
        : saved
          ? 'where the last run stopped'
          : 'now (--after start reads every event kept)';
    say.info(`Following the changes feed of ${baseUrl} from ${from}; the place is saved in ${statePath}. Ctrl-C to stop.`);
    if (target && secret && !given)
      say.info(`Forwarding to ${target}, signed with ${secret} (kept in the state file; pass --secret to use yours).`);
    else if (target) say.info(`Forwarding to ${target}, signed with the secret given.`);

    const { createClient } = await import('../../index.ts');
    const sleep = ctx.sleep ?? pause;
    const lw = createClient({ baseUrl, apiKey, fetch: ctx.fetch, sleep: (ms, signal) => sleep(ms, signal ?? ctx.signal) });
    await tail(ctx, {
      lw,
      start,
      types,
      pageSize,
      ...(target && secret ? { forwardTo: { url: target, secret } } : {}),
      save: (cursor) => saveState(statePath, { ...state, cursor: cursor ?? null }, now()),
    });
    say.info('Stopped; the next run resumes after the last event handled.');
    return ExitCode.ok;
  },
};
