/**
 * The loop of `leadwire events tail`: read the feed to the end, handle each event (print it, or post it to the
 * receiver until it answers 2xx), save the position after each, then poll again after a pause that grows while
 * nothing happens. Reading, forwarding and the state never run ahead of one another, so a restart resumes exactly
 * after the last event handled.
 */
import type { LeadwireClient } from '../../client/index.ts';
import type { EventListOptions, FeedEvent } from '../../client/types.ts';
import type { CliContext } from '../context.ts';
import { cliErrorOf, UsageError } from '../exit-codes.ts';
import { forward, recordIdOf } from '../listen/forward.ts';
import { messages } from '../output.ts';
import { deliveryOf } from './sign.ts';
import { pause } from '../pause.ts';

/** Polls once caught up: soon after events arrived, then doubling while none do, up to this. */
export const POLL_MIN_MS = 1_000;
export const POLL_MAX_MS = 15_000;
/** Redelivery to a receiver that did not answer 2xx: doubling from 0.5 s up to 15 s, like listen's reconnections. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 15_000;

export interface TailOptions {
  lw: LeadwireClient;
  /** Where to start: a cursor, `now`, or undefined for the oldest event kept. */
  start: string | undefined;
  /** Names of the catalogue, checked by the command. */
  types: EventListOptions['types'];
  pageSize: number;
  /** Posts each event there, signed with `secret`; absent: prints each event as a JSON line. */
  forwardTo?: { url: string; secret: string };
  /** Called with the new position after each event handled, and when an empty poll moves it on. */
  save(cursor: string | undefined): Promise<void>;
}

/** Runs until the signal aborts. Throws a CliError for a refused key (exit 3) or cursor (exit 2). */
export async function tail(ctx: CliContext, o: TailOptions): Promise<void> {
  const say = messages(ctx);
  const sleep = ctx.sleep ?? pause;
  const now = ctx.now ?? (() => Date.now());
  let cursor = o.start;
  let saved = o.start;
  const save = async (at: string | undefined) => {
    if (at === saved) return;
    await o.save(at);
    saved = at;
  };
  let idle = 0;
  let failures = 0;

  /** Handles one event; false when interrupted before the receiver took it (it is not handled then). */
  const handle = async (event: FeedEvent): Promise<boolean> => {
    if (!o.forwardTo) {
      ctx.stdout.write(`${JSON.stringify(event)}\n`);
      return true;
    }
    for (let attempt = 0; ; attempt++) {
      const d = deliveryOf(event, o.forwardTo.secret, now());
      const result = await forward(ctx.fetch, o.forwardTo.url, d, ctx.signal);
      if (ctx.signal.aborted) return false;
      const at = new Date(now()).toISOString();
      const recordId = recordIdOf(d.body);
      const ok = result.status !== null && result.status >= 200 && result.status < 300;
      const outcome = result.status === null ? `failed: ${result.error}` : `${result.status}`;
      const wait = ok ? 0 : Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
      say.info(
        `${at}  ${d.event.padEnd(24)} ${recordId}  -> ${outcome} (${result.durationMs} ms)${ok ? '' : `; again in ${(wait / 1000).toFixed(1)} s`}`,
      );
      ctx.stdout.write(`${JSON.stringify({ at, id: d.id, event: d.event, recordId, attempt: attempt + 1, ...result })}\n`);
      if (ok) return true;
      await sleep(wait, ctx.signal);
      if (ctx.signal.aborted) return false;
    }
  };

  while (!ctx.signal.aborted) {
    const feed = o.lw.events.list({ after: cursor, types: o.types, limit: o.pageSize, signal: ctx.signal });
    let handled = 0;
    try {
      for await (const event of feed) {
        if (ctx.signal.aborted || !(await handle(event))) break;
        await save(feed.cursor);
        handled++;
      }
      failures = 0;
    } catch (err) {
      if (ctx.signal.aborted) break;
      const e = err as { status?: number; code?: string; message?: string };
      if (e.status === 400) {
        throw new UsageError(
          `the server refused the feed request (${String(e.code)}): ${String(e.message)}${e.code === 'invalid_cursor' ? '; start elsewhere with --after now or --after start' : ''}`,
        );
      }
      if (e.status === 401 || e.status === 403 || typeof e.status !== 'number') throw cliErrorOf(err, 'public');
      // The client already retried; a server or network that is down for longer is waited for, as listen does.
      const wait = Math.min(POLL_MAX_MS, POLL_MIN_MS * 2 ** failures++);
      say.warn(`reading the feed failed (${String(e.code)}: ${String(e.message)}); trying again in ${(wait / 1000).toFixed(1)} s`);
      cursor = feed.cursor;
      await sleep(wait, ctx.signal);
      continue;
    }
    if (ctx.signal.aborted) break;
    // Caught up: the page's own cursor, which an empty page moves on to the horizon, is where the next poll starts.
    cursor = feed.cursor;
    await save(cursor);
    idle = handled > 0 ? 0 : idle + 1;
    await sleep(Math.min(POLL_MAX_MS, POLL_MIN_MS * 2 ** Math.max(0, idle - 1)), ctx.signal);
  }
}
