import { resolve } from 'node:path';
import { positionals } from '../args.ts';
import type { CliContext, Command } from '../context.ts';
import { CliError, cliErrorOf, ExitCode, UsageError } from '../exit-codes.ts';
import { CONTACT_COLUMNS, type ExportFormat, formatRecords } from '../export/format.ts';
import { counter } from '../export/progress.ts';
import { fileSink, OutputClosed, type Sink, stdoutSink } from '../export/sink.ts';
import { messages } from '../output.ts';
import { connectionOf, connectionUsage, PAGE_SIZE_OPTION, pageSizeOf, parseCommand } from '../options.ts';

const USAGE = `Usage: leadwire export contacts --format csv|jsonl [options]

Writes every live contact, oldest change first, to stdout or a file, one page of 100 at a time
(GET /v1/contacts): memory stays the same for any number of contacts. Needs a Public API key
with contacts:read.

CSV has a fixed header: ${CONTACT_COLUMNS.join(',')}.
Empty values are empty cells, tags are joined with ";", fields with a quote, comma or line
break are quoted ("" for a quote); lines end in \\n. The file imports again with
\`leadwire import\` (unknown columns are ignored). JSONL is one contact per line as the API
returns it, every field included.

Options:
  --format <csv|jsonl>   the output format (required)
  --updated-since <iso>  only contacts changed at or after this instant, e.g. 2026-11-20T00:00:00Z
  --output <file>        write to this file (created 0600, in place only once complete);
                         default stdout
  --progress             show the count and rate on stderr even when it is not a terminal
                         (on a terminal it is always shown)
  --page-size <n>        contacts per request, 1-100 (default 100)
${connectionUsage('public', 25)}

Prints "Exported <n> contacts" on stderr at the end, and with --output a JSON summary on stdout.
Exit codes: 0 done; 2 usage error (or a rejected --updated-since); 3 key missing or refused;
4 server or network error after retries (a file being written is removed); 130 interrupted.

Examples:
  leadwire export contacts --format csv --output contacts.csv
  leadwire export contacts --format jsonl --updated-since 2026-11-20T00:00:00Z | jq .email
`;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export const exportCommand: Command = {
  name: 'export',
  summary: 'write every contact to a CSV or JSONL file, streaming',
  usage: USAGE,
  async run(ctx, argv) {
    const { values, positionals: rest } = parseCommand(argv, {
      format: { type: 'string' },
      'updated-since': { type: 'string' },
      output: { type: 'string' },
      progress: { type: 'boolean' },
      ...PAGE_SIZE_OPTION,
    });
    const [subject] = positionals(rest, ['what to export (contacts)']);
    if (subject !== 'contacts') throw new UsageError(`cannot export ${JSON.stringify(subject)}: only contacts`);
    const format = values.format;
    if (format !== 'csv' && format !== 'jsonl') throw new UsageError('--format must be csv or jsonl');
    const since = values['updated-since'];
    if (since !== undefined && (!ISO.test(since) || Number.isNaN(Date.parse(since))))
      throw new UsageError(
        `--updated-since must be an ISO 8601 instant with a time zone, e.g. 2026-11-20T00:00:00Z; got ${JSON.stringify(since)}`,
      );
    const pageSize = pageSizeOf(values);
    const { apiKey, baseUrl } = await connectionOf(ctx, values, 'public');

    const output = values.output === undefined ? undefined : resolve(ctx.cwd, values.output);
    let sink: Sink;
    try {
      sink = output ? await fileSink(output) : stdoutSink(ctx.stdout);
    } catch (err) {
      throw new UsageError(`cannot write ${output!}: ${(err as Error).message}`);
    }
    const now = ctx.now ?? (() => Date.now());
    const progress = ctx.isTTY || values.progress ? counter(ctx, { label: 'export', unit: 'contacts', now }) : undefined;
    const { outcome, count } = await exportContacts(ctx, {
      apiKey,
      baseUrl,
      since,
      pageSize,
      format,
      sink,
      progress: (n) => progress?.add(n),
    });
    progress?.finish();
    if (outcome === 'interrupted') {
      messages(ctx).info(`Interrupted${output ? `: ${output} was not written` : ''}.`);
      return ExitCode.interrupted;
    }
    const n = count.toLocaleString('en-US');
    if (outcome === 'closed') {
      messages(ctx).info(`Stopped: the output was closed after ${n} contacts.`);
      return ExitCode.ok;
    }
    messages(ctx).info(`Exported ${n} contacts${output ? ` to ${output}` : ''}.`);
    if (output) ctx.stdout.write(`${JSON.stringify({ exported: count, format, output })}\n`);
    return ExitCode.ok;
  },
};

/**
 * Streams the pages to the sink and closes it, or aborts it on a failure (thrown as a CliError) or an interruption.
 * `closed`: the reader of stdout went away.
 */
async function exportContacts(
  ctx: CliContext,
  o: {
    apiKey: string;
    baseUrl: string;
    since: string | undefined;
    pageSize: number;
    format: ExportFormat;
    sink: Sink;
    progress: (n: number) => void;
  },
): Promise<{ outcome: 'done' | 'interrupted' | 'closed'; count: number }> {
  // Loaded here, not at the top: the other commands (help, login) start without the /v1 client.
  const { createClient } = await import('../../index.ts');
  const sleep = ctx.sleep;
  const lw = createClient({
    baseUrl: o.baseUrl,
    apiKey: o.apiKey,
    fetch: ctx.fetch,
    ...(sleep ? { sleep: (ms: number, signal?: AbortSignal) => sleep(ms, signal ?? ctx.signal) } : {}),
  });
  let count = 0;
  try {
    // One page in memory at a time: the next is asked for only once this one is written.
    const listing = lw.contacts.list({ updatedSince: o.since, limit: o.pageSize, signal: ctx.signal });
    if (o.format === 'csv') await o.sink.write(formatRecords('csv', [], true));
    for await (const page of listing.pages()) {
      await o.sink.write(formatRecords(o.format, page.items, false));
      count += page.items.length;
      o.progress(page.items.length);
      if (ctx.signal.aborted) break;
    }
    if (ctx.signal.aborted) {
      await o.sink.abort();
      return { outcome: 'interrupted', count };
    }
    await o.sink.close();
    return { outcome: 'done', count };
  } catch (err) {
    await o.sink.abort();
    if (ctx.signal.aborted) return { outcome: 'interrupted', count };
    // The reader of stdout has all it wanted (`| head`): not a failure.
    if (err instanceof OutputClosed) return { outcome: 'closed', count };
    const e = err as { status?: number; code?: string; message?: string };
    if (e.status === 400) throw new UsageError(`the server refused the request (${String(e.code)}): ${String(e.message)}`);
    if (err instanceof CliError || typeof e.status === 'number') throw cliErrorOf(err, 'public');
    throw new CliError(ExitCode.server, `the export failed: ${(err as Error).message}`, { cause: err });
  }
}
