import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { ScreenProps } from '../screen.ts';
import { ConfirmAction, Copyable, Link, Loaded, Notice, Page, ProblemLine, When } from '../ui/common.tsx';
import { DeliveryFilter } from '../ui/delivery-filter.tsx';
import { DeliveryLog, type Watch, watchIds } from '../ui/delivery-log.tsx';
import { Field, Form, FormProblem, Submit } from '../ui/form.tsx';
import { useAction, useLoad } from '../ui/use-load.ts';
import { type Endpoint, EndpointStatus, VerifyHelp } from '../ui/webhooks.tsx';

/**
 * `/webhooks/:id`, the endpoint screen (the disabled-endpoint mail links here): its state, the signing secret, a test,
 * the delivery log, recovery, and how a receiver verifies what it gets.
 */
export function Webhook({ params }: ScreenProps) {
  const id = params.id!;
  const endpoint = useLoad(() => api.webhooks.get.query({ id }), [id]);
  const [watch, setWatch] = useState<Watch | null>(null);
  // An endpoint on every event filters its log by any type of the catalogue.
  const types = useLoad(() => api.webhooks.eventTypes.query());
  const catalogue = types.state === 'ready' ? types.data.filter((t) => t.subscribable).map((t) => t.name) : [];
  return (
    <Page title="Webhook endpoint" intro={<Link to="/webhooks">All endpoints</Link>}>
      <Loaded load={endpoint} what="the endpoint">
        {(e) => (
          <>
            <Details endpoint={e} onChanged={endpoint.reload} />
            <DeliveryFilter endpoint={e} onChanged={endpoint.reload} />
            <Secret endpoint={e} onChanged={endpoint.reload} />
            <SendTest id={id} onQueued={setWatch} />
            <DeliveryLog id={id} events={e.events[0] === '*' ? catalogue : e.events} watch={watch} onQueued={setWatch} />
            <Recover id={id} onQueued={setWatch} />
            <VerifyHelp />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function Details({ endpoint: e, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const toggle = useAction(async () => {
    await (e.enabled ? api.webhooks.disable.mutate({ id: e.id }) : api.webhooks.enable.mutate({ id: e.id }));
    onChanged();
  });
  return (
    <section class="card" aria-labelledby="details-heading">
      <h2 id="details-heading">Endpoint</h2>
      <dl class="facts">
        <dt>URL</dt>
        <dd>
          <Copyable label="Endpoint URL" value={e.url} />
        </dd>
        <dt>Status</dt>
        <dd>
          <EndpointStatus endpoint={e} />
        </dd>
        <dt>Events</dt>
        <dd>
          {e.events[0] === '*' ? (
            <p class="flush">
              Every event (<code>*</code>): every type of the catalogue, including types added later.
            </p>
          ) : (
            <ul class="event-list">
              {e.events.map((name) => (
                <li key={name}>
                  <code>{name}</code>
                </li>
              ))}
            </ul>
          )}
        </dd>
        {e.description && (
          <>
            <dt>Description</dt>
            <dd>{e.description}</dd>
          </>
        )}
        <dt>Failed attempts in a row</dt>
        <dd>{e.failureCount} (10 disable the endpoint)</dd>
        <dt>Created</dt>
        <dd>
          <When at={e.createdAt} />
        </dd>
      </dl>
      <div class="row-actions">
        <button type="button" class={e.enabled ? 'danger' : 'primary'} disabled={toggle.busy} onClick={() => void toggle.run()}>
          {e.enabled ? 'Disable endpoint' : 'Enable endpoint'}
        </button>
      </div>
      <ProblemLine problem={toggle.problem} />
    </section>
  );
}

/** Hidden until asked for: a secret on screen is a secret in every screenshot and screen share. */
function Secret({ endpoint: e, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const [shown, setShown] = useState(false);
  const rotate = useAction(async () => {
    await api.webhooks.rotateSecret.mutate({ id: e.id });
    setShown(true);
    onChanged();
  });
  const grace = e.previousSecretExpiresAt;
  return (
    <section class="card" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      {shown ? (
        <Copyable label="Signing secret" value={e.secret} />
      ) : (
        <p>
          <code aria-label="Signing secret, hidden">whsec_••••••••••••••••</code>
        </p>
      )}
      <div class="row-actions">
        <button type="button" aria-expanded={shown} onClick={() => setShown(!shown)}>
          {shown ? 'Hide secret' : 'Reveal secret'}
        </button>
        <ConfirmAction
          label="Rotate secret"
          tone="plain"
          question="A new secret signs at once. The current one keeps signing too for 24 hours, so your receiver can switch without rejecting a delivery."
          confirmLabel="Rotate now"
          busy={rotate.busy}
          onConfirm={rotate.run}
        />
      </div>
      {grace && new Date(grace) > new Date() && (
        <Notice tone="warn">
          The previous secret still signs deliveries (a second signature in <code>webhook-signature</code>) until <When at={grace} />. Move
          your receiver to the new secret before then.
        </Notice>
      )}
      <ProblemLine problem={rotate.problem} />
    </section>
  );
}

function SendTest({ id, onQueued }: { id: string; onQueued: (w: Watch) => void }) {
  const [sent, setSent] = useState<string | null>(null);
  const send = useAction(async () => {
    const q = await api.webhooks.test.mutate({ id });
    setSent(
      q.state === 'pending'
        ? 'A ping is on its way; its attempt appears in the delivery log below.'
        : `Not sent: ${q.skipReason ?? 'skipped'}.`,
    );
    onQueued(watchIds([q.deliveryId]));
  });
  return (
    <section class="card" aria-labelledby="test-heading">
      <h2 id="test-heading">Send a test</h2>
      <p>
        Sends one <code>ping</code> event to this endpoint, even while it is disabled. It is not counted toward disabling it.
      </p>
      <button type="button" class="primary" disabled={send.busy} onClick={() => void send.run()}>
        Send test event
      </button>
      {sent && <Notice>{sent}</Notice>}
      <ProblemLine problem={send.problem} />
    </section>
  );
}

/** `datetime-local` as the browser gives it (local time, no zone), `hours` ago. */
function localInput(hoursAgo: number): string {
  const d = new Date(Date.now() - hoursAgo * 3_600_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function Recover({ id, onQueued }: { id: string; onQueued: (w: Watch) => void }) {
  const [since, setSince] = useState(() => localInput(24));
  const [result, setResult] = useState<string | null>(null);
  const recover = useAction(async () => {
    setResult(null);
    const at = new Date(since);
    // An empty or impossible date is sent as typed, so the server's sentence says what is wrong with it.
    const r = await api.webhooks.recover.mutate({ id, since: Number.isNaN(at.getTime()) ? since : at.toISOString() });
    setResult(
      r.replayed === 0 && r.remaining === 0
        ? 'Nothing failed or was skipped since then: there was nothing to replay.'
        : `${r.replayed} ${r.replayed === 1 ? 'delivery' : 'deliveries'} queued again.` +
            (r.remaining ? ` ${r.remaining} left for the hourly delivery limit: recover again later.` : ''),
    );
    // Replays are new deliveries whose ids the answer does not give: the log waits for that many new ones.
    if (r.replayed > 0) onQueued({ key: Date.now(), ids: [], count: r.replayed });
  });
  const fields = recover.problem?.fields ?? {};
  return (
    <section class="card" aria-labelledby="recover-heading">
      <h2 id="recover-heading">Recover</h2>
      <Form onSubmit={recover.run} label="Recover failed deliveries">
        <FormProblem problem={recover.problem} fields={['since']} />
        <Field
          label="Replay what failed or was skipped since"
          hint="In your local time. Deliveries that later succeeded are not sent twice."
          error={fields.since}
        >
          {({ id: inputId, describedBy, invalid }) => (
            <input
              id={inputId}
              type="datetime-local"
              value={since}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onInput={(ev) => setSince(ev.currentTarget.value)}
            />
          )}
        </Field>
        <div>
          <Submit busy={recover.busy} busyLabel="Recovering…">
            Recover deliveries
          </Submit>
        </div>
      </Form>
      {result && <Notice>{result}</Notice>}
    </section>
  );
}
