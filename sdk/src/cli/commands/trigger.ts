import { parseArgs } from 'node:util';
import { positionals, usageErrors } from '../args.ts';
import { resolveCredentials } from '../config.ts';
import type { Command } from '../context.ts';
import { CliError, cliErrorOf, ExitCode, UsageError } from '../exit-codes.ts';
import { checkEvent, eventList } from '../listen/events.ts';
import { messages } from '../output.ts';

const USAGE = `Usage: leadwire trigger <event> [--endpoint <id>] [options]

Sends the catalogue's example of <event>, stamped with the current time, to your organization's
\`leadwire listen\` sessions (never to subscribed endpoints). With --endpoint it is also delivered
to that one endpoint (a manual delivery, as the test ping). Needs an Internal key of an owner or admin.

Options:
  --endpoint <id>   also deliver it to this webhook endpoint
  --api-key <key>   an Internal key (default LEADWIRE_API_KEY, then \`leadwire login\`)
  --base-url <url>  the server's API root (default LEADWIRE_BASE_URL, then the saved one)
  -h, --help        show this help

Events:
${eventList()}

Prints what was sent on stderr and the server's answer as JSON on stdout.
Exit codes: 0 sent; 2 usage error, unknown event or endpoint; 3 key missing or refused;
4 server or network error.

Example:
  leadwire trigger contact.created
  leadwire trigger deal.won --endpoint 6f1c2a8e-…
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface TriggerAnswer {
  id: string;
  event: string;
  payload: { timestamp: string };
  listening: boolean;
  delivery: { deliveryId: string; state: string; skipReason: string | null } | null;
}

export const triggerCommand: Command = {
  name: 'trigger',
  summary: "send an event's example to your listen sessions (and optionally one endpoint)",
  usage: USAGE,
  async run(ctx, argv) {
    const { values, positionals: rest } = usageErrors(() =>
      parseArgs({
        args: argv,
        options: { endpoint: { type: 'string' }, 'api-key': { type: 'string' }, 'base-url': { type: 'string' } },
        allowPositionals: true,
      }),
    );
    const [name] = positionals(rest, ['event']);
    const event = checkEvent(name!, 'trigger');
    const endpointId = values.endpoint;
    if (endpointId !== undefined && !UUID.test(endpointId))
      throw new UsageError(`--endpoint must be a webhook endpoint id (a UUID), got ${JSON.stringify(endpointId)}`);
    const { apiKey, baseUrl } = await resolveCredentials(ctx, { apiKey: values['api-key'], baseUrl: values['base-url'] }, 'internal');
    let res: Response;
    try {
      res = await ctx.fetch(`${baseUrl}/webhooks/trigger`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event, ...(endpointId ? { endpointId } : {}) }),
        signal: ctx.signal,
      });
    } catch (err) {
      throw cliErrorOf(
        { status: 0, code: 'network_error', message: (err as { cause?: Error }).cause?.message ?? (err as Error).message },
        'internal',
      );
    }
    const body = (await res.json().catch(() => ({}))) as Partial<TriggerAnswer> & { error?: string; code?: string; required?: unknown };
    if (!res.ok) {
      if (res.status === 400 || res.status === 404)
        throw new CliError(ExitCode.usage, `${body.error ?? res.statusText} (${res.status} ${body.code ?? ''})`.trim());
      throw cliErrorOf(
        { status: res.status, code: body.code ?? 'http_error', message: body.error ?? res.statusText, required: body.required },
        'internal',
      );
    }
    const answer = body as TriggerAnswer;
    const say = messages(ctx);
    say.info(`Sent ${answer.event} (example ${answer.id}, timestamp ${answer.payload.timestamp}) to your listen sessions.`);
    if (!answer.listening) say.warn('nobody is listening: run `leadwire listen --forward-to <url>` in another terminal first');
    if (answer.delivery) {
      const skipped = answer.delivery.state === 'skipped' ? ` but skipped: ${answer.delivery.skipReason ?? ''}` : '';
      say.info(`Queued delivery ${answer.delivery.deliveryId} to endpoint ${endpointId}${skipped}.`);
    }
    ctx.stdout.write(`${JSON.stringify(answer)}\n`);
    return ExitCode.ok;
  },
};
