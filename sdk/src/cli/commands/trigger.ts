import { positionals } from '../args.ts';
import type { CliContext, Command } from '../context.ts';
import { CliError, cliErrorOf, ExitCode, UsageError } from '../exit-codes.ts';
import { checkEvent, eventList } from '../listen/events.ts';
import { messages } from '../output.ts';
import { connectionOf, connectionUsage, parseCommand } from '../options.ts';

const USAGE = `Usage: leadwire trigger <event> [--endpoint <id> | --create] [options]

Sends the catalogue's example of <event>, stamped with the current time, to your organization's
\`leadwire listen\` sessions (never to subscribed endpoints). With --endpoint it is also delivered
to that one endpoint (a manual delivery, as the test ping). The example is synthetic: the ids in it
(the contact's, the deal's…) do not exist on the server. With --create the event is real instead:
a contact is created through the API, and its contact.created goes wherever a real one goes (your
listen sessions and every endpoint subscribed to it). Needs an Internal key of an owner or admin.

Options:
  --endpoint <id>   also deliver the example to this webhook endpoint
  --create          contact.created only: create a real contact (trigger-…@example.com), so the
                    event and its ids are real
${connectionUsage('internal', 20)}

Events:
${eventList()}

Prints what was sent on stderr and the server's answer as JSON on stdout.
Exit codes: 0 sent; 2 usage error, unknown event or endpoint; 3 key missing or refused;
4 server or network error.

Example:
  leadwire trigger contact.created
  leadwire trigger contact.created --create
  leadwire trigger deal.won --endpoint 6f1c2a8e-…
`;

/** The events --create can make real, and how (one request each). */
const CREATABLE = ['contact.created'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface TriggerAnswer {
  id: string;
  event: string;
  payload: { timestamp: string; data?: Record<string, unknown> };
  listening: boolean;
  delivery: { deliveryId: string; state: string; skipReason: string | null } | null;
  synthetic?: boolean;
}

/** The id of the first record in an example's data (data.contact.id, data.deal.id…), to name what does not exist. */
function exampleRecord(payload: { data?: Record<string, unknown> }): string | undefined {
  for (const [key, value] of Object.entries(payload.data ?? {})) {
    const id = (value as { id?: unknown } | null)?.id;
    if (typeof id === 'string') return `${key} ${id}`;
  }
  return undefined;
}

export const triggerCommand: Command = {
  name: 'trigger',
  summary: "send an event's example to your listen sessions (and optionally one endpoint)",
  usage: USAGE,
  async run(ctx, argv) {
    const { values, positionals: rest } = parseCommand(argv, {
      endpoint: { type: 'string' },
      create: { type: 'boolean' },
    });
    const [name] = positionals(rest, ['event']);
    const event = checkEvent(name!, 'trigger');
    const endpointId = values.endpoint;
    if (endpointId !== undefined && !UUID.test(endpointId))
      throw new UsageError(`--endpoint must be a webhook endpoint id (a UUID), got ${JSON.stringify(endpointId)}`);
    if (values.create && !CREATABLE.includes(event))
      throw new UsageError(`--create makes a real ${CREATABLE.join(', ')} only; for ${event}, make the change through the API`);
    if (values.create && endpointId !== undefined)
      throw new UsageError('--create and --endpoint do not go together: a real event goes to every endpoint subscribed to it');
    const { apiKey, baseUrl } = await connectionOf(ctx, values, 'internal');
    const post = (path: string, body: unknown) => postJson(ctx, `${baseUrl}${path}`, apiKey, body);
    const say = messages(ctx);
    if (values.create) {
      // A real contact through the application surface: its contact.created is the one every real change makes.
      const email = `trigger-${globalThis.crypto.randomUUID().slice(0, 8)}@example.com`;
      const contact = (await post('/contacts', { email, firstName: 'Trigger', lastName: 'Example', source: 'leadwire-trigger' })) as {
        id: string;
        email: string;
      };
      say.info(
        `Created contact ${contact.id} (${contact.email}): its real contact.created goes to your listen sessions and subscribed endpoints.`,
      );
      ctx.stdout.write(`${JSON.stringify({ event, synthetic: false, contact: { id: contact.id, email: contact.email } })}\n`);
      return ExitCode.ok;
    }
    const answer = (await post('/webhooks/trigger', { event, ...(endpointId ? { endpointId } : {}) })) as TriggerAnswer;
    say.info(`Sent ${answer.event} (example ${answer.id}, timestamp ${answer.payload.timestamp}) to your listen sessions.`);
    const record = exampleRecord(answer.payload);
    say.info(
      `This is the catalogue's synthetic example: its ids${record ? ` (${record})` : ''} do not exist on the server.${
        CREATABLE.includes(event)
          ? ` \`leadwire trigger ${event} --create\` sends a real one.`
          : ' Make a real change through the API for a real event.'
      }`,
    );
    if (!answer.listening) say.warn('nobody is listening: run `leadwire listen --forward-to <url>` in another terminal first');
    if (answer.delivery) {
      const skipped = answer.delivery.state === 'skipped' ? ` but skipped: ${answer.delivery.skipReason ?? ''}` : '';
      say.info(`Queued delivery ${answer.delivery.deliveryId} to endpoint ${endpointId}${skipped}.`);
    }
    ctx.stdout.write(`${JSON.stringify({ ...answer, synthetic: true })}\n`);
    return ExitCode.ok;
  },
};

/** POSTs JSON with the key; a 400 or 404 is the caller's mistake (exit 2), the rest as every command reports them. */
async function postJson(ctx: CliContext, url: string, apiKey: string, payload: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await ctx.fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: ctx.signal,
    });
  } catch (err) {
    throw cliErrorOf(
      { status: 0, code: 'network_error', message: (err as { cause?: Error }).cause?.message ?? (err as Error).message },
      'internal',
    );
  }
  const body = (await res.json().catch(() => ({}))) as { error?: string; code?: string; required?: unknown };
  if (!res.ok) {
    if (res.status === 400 || res.status === 404)
      throw new CliError(ExitCode.usage, `${body.error ?? res.statusText} (${res.status} ${body.code ?? ''})`.trim());
    throw cliErrorOf(
      { status: res.status, code: body.code ?? 'http_error', message: body.error ?? res.statusText, required: body.required },
      'internal',
    );
  }
  return body;
}
