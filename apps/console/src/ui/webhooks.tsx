import type { Outputs } from '../api.ts';
import { Copyable } from './common.tsx';
import { Checkbox } from './form.tsx';

export type Endpoint = Outputs['webhooks']['get'];
export type EventType = Outputs['webhooks']['eventTypes'][number];
/** What the picker holds: every event of the catalogue, now and later (`*`), or the names ticked. */
export type EventChoice = '*' | string[];

/** Enabled, or disabled with the reason beside it (the reason is what an owner acts on). */
export function EndpointStatus({ endpoint }: { endpoint: Pick<Endpoint, 'enabled' | 'disabledReason'> }) {
  if (endpoint.enabled) return <span class="badge on">Enabled</span>;
  return (
    <span class="endpoint-status">
      <span class="badge off">Disabled</span>
      {endpoint.disabledReason && <span class="reason"> {endpoint.disabledReason}</span>}
    </span>
  );
}

/** The catalogue's descriptions mark names with backticks, as the docs do: shown as code, not as stray quotes. */
export function Described({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part))}</>;
}

/** The server's message for `events` or any one of them (`events.2`), shown once under the picker. */
export const eventsError = (fields: Record<string, string>) =>
  Object.entries(fields).find(([path]) => path === 'events' || path.startsWith('events.'))?.[1];

/**
 * The event picker: every event of the catalogue by group, each with its description and an example payload to open,
 * or "every event". Built from `webhooks.eventTypes`, so a new event appears here without a console change.
 */
export function EventPicker(props: {
  types: EventType[];
  value: EventChoice;
  onValue: (v: EventChoice) => void;
  error?: string | undefined;
}) {
  const subscribable = props.types.filter((e) => e.subscribable);
  const groups = [...new Set(subscribable.map((e) => e.group))];
  const all = props.value === '*';
  const chosen = new Set(all ? [] : props.value);
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    props.onValue(subscribable.map((e) => e.name).filter((n) => next.has(n)));
  };
  return (
    <fieldset
      class="event-picker"
      aria-describedby={props.error ? 'events-error' : undefined}
      aria-invalid={props.error ? true : undefined}
    >
      <legend>Events</legend>
      <p class="hint">The events this endpoint receives. Open an event to see the payload it sends.</p>
      {/* The refusal first, under the legend: on a long picker it is what the focus lands beside. */}
      {props.error && (
        <p class="field-error" id="events-error">
          {props.error}
        </p>
      )}
      <Checkbox
        label="Every event"
        hint="(every type of the catalogue, including types added later: stored as *)"
        checked={all}
        onChecked={(on) => props.onValue(on ? '*' : [])}
      />
      {!all &&
        groups.map((group) => (
          <fieldset key={group} class="event-group">
            <legend>{group}</legend>
            {subscribable
              .filter((e) => e.group === group)
              .map((e) => (
                <div key={e.name} class="event-choice">
                  <Checkbox
                    label={<code>{e.name}</code>}
                    hint={<Described text={e.description} />}
                    checked={chosen.has(e.name)}
                    onChecked={(on) => toggle(e.name, on)}
                  />
                  <details>
                    <summary>Example payload of {e.name}</summary>
                    <pre tabIndex={0} aria-label={`Example payload of ${e.name}`}>
                      <code>{JSON.stringify(e.example, null, 2)}</code>
                    </pre>
                  </details>
                </div>
              ))}
          </fieldset>
        ))}
    </fieldset>
  );
}

/** The receiver's side, as docs/webhooks.md ("Verifying a delivery") gives it: keep the two in step. */
const VERIFY: { language: string; code: string }[] = [
  {
    language: 'Node.js with @leadwire/sdk',
    code: `import { verifyWebhook, WebhookVerificationError } from '@leadwire/sdk/webhooks';

// rawBody: the body exactly as received (bytes or text), before any JSON parsing
const event = await verifyWebhook({ rawBody, headers: req.headers, secret: process.env.LEADWIRE_WEBHOOK_SECRET });
// a delivery that is not genuine throws WebhookVerificationError: answer 400`,
  },
  {
    language: 'Node.js with standardwebhooks',
    code: `import { Webhook } from 'standardwebhooks';

const event = new Webhook(secret).verify(rawBody, req.headers); // throws when the delivery is not genuine`,
  },
  {
    language: 'Python with standardwebhooks',
    code: `from standardwebhooks import Webhook

# raw_body: the request body as bytes, exactly as received; headers: the request's headers
event = Webhook(secret).verify(raw_body, headers)  # raises WebhookVerificationError when not genuine`,
  },
  {
    language: 'Go with standard-webhooks',
    code: `import standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

wh, err := standardwebhooks.NewWebhook(secret)
// rawBody: the request body as read, before decoding; err is nil only for a genuine delivery
err = wh.Verify(rawBody, r.Header)`,
  },
];

/** How a receiver checks that a delivery is genuine, in a few languages, each ready to copy. */
export function VerifyHelp() {
  return (
    <section class="card" aria-labelledby="verify-heading">
      <h2 id="verify-heading">Verify signatures</h2>
      <p>
        Every delivery is signed with this endpoint's secret under the Standard Webhooks headers (<code>webhook-id</code>,{' '}
        <code>webhook-timestamp</code>, <code>webhook-signature</code>). Check them over the raw body before you trust it; a timestamp more
        than 5 minutes off is refused, so a captured delivery cannot be replayed. De-duplicate on <code>webhook-id</code>.
      </p>
      {VERIFY.map((v) => (
        <div key={v.language}>
          <h3>{v.language}</h3>
          <Copyable label={`${v.language} example`} value={v.code} multiline />
        </div>
      ))}
    </section>
  );
}

/** An endpoint's events in words: "Every event" for the wildcard, the name of a single one, or how many. */
export const eventsLabel = (events: string[]) =>
  events[0] === '*' ? 'Every event' : events.length === 1 ? events[0]! : `${events.length} events`;
