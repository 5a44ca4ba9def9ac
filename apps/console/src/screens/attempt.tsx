import { useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import type { ScreenProps } from '../screen.ts';
import { Copyable, Link, Loaded, Notice, Page, ProblemLine, When } from '../ui/common.tsx';
import { outcomeClass } from '../ui/delivery-log.tsx';
import { Table } from '../ui/table.tsx';
import { useAction, useLoad } from '../ui/use-load.ts';

type Detail = Outputs['webhooks']['attempt'];

/** A body as people read it: JSON pretty-printed (the copy button still copies the exact bytes); anything else as is. */
export function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function Headers({ caption, headers }: { caption: string; headers: [string, string][] | null }) {
  if (!headers) return <p class="muted">Not recorded for this attempt.</p>;
  if (headers.length === 0) return <p class="muted">None.</p>;
  return (
    <Table
      class="headers"
      caption={caption}
      rows={headers.map(([name, value], i) => ({ name, value, i }))}
      rowKey={(h) => `${h.i}`}
      columns={[
        { header: 'Header', cell: (h) => <code>{h.name}</code> },
        { header: 'Value', cell: (h) => <code class="header-value">{h.value}</code> },
      ]}
    />
  );
}

/**
 * `/webhooks/:id/attempts/:attemptId`: one attempt as Svix's portal shows it: the request exactly as sent (URL,
 * headers, body), the answer (status, headers, the start of its body), the duration, and the next attempt with why.
 */
export function Attempt({ params }: ScreenProps) {
  const { id, attemptId } = params as { id: string; attemptId: string };
  const load = useLoad(() => api.webhooks.attempt.query({ id, attemptId }), [id, attemptId]);
  const [queued, setQueued] = useState<string | null>(null);
  const redeliver = useAction(async (deliveryId: string) => {
    const q = await api.webhooks.redeliver.mutate({ id, deliveryId });
    setQueued(
      q.state === 'pending'
        ? 'Queued again: its attempt appears in the delivery log in a moment.'
        : `Not sent: ${q.skipReason ?? 'skipped'}.`,
    );
  });
  return (
    <Page title="Delivery attempt" intro={<Link to={`/webhooks/${id}`}>Back to the endpoint and its delivery log</Link>}>
      <Loaded load={load} what="the attempt">
        {(a: Detail) => (
          <>
            <section class="card" aria-labelledby="attempt-summary">
              <h2 id="attempt-summary">
                <code>{a.event}</code> <span class={outcomeClass(a.outcome)}>{a.outcome}</span>
              </h2>
              <dl class="facts">
                <dt>Attempt</dt>
                <dd>
                  {a.attempt === 0
                    ? 'none (skipped before any attempt)'
                    : `${a.attempt} of 5${a.manual ? ' (manual: a test or a replay)' : ''}`}
                </dd>
                <dt>When</dt>
                <dd>
                  <When at={a.at} />
                </dd>
                <dt>Duration</dt>
                <dd>{a.durationMs === null ? 'not sent' : `${a.durationMs} ms`}</dd>
                <dt>Next attempt</dt>
                <dd>
                  {a.next.at && (
                    <>
                      <When at={a.next.at} />.{' '}
                    </>
                  )}
                  {a.next.why}
                </dd>
                <dt>Event id</dt>
                <dd>{a.eventId ? <code>{a.eventId}</code> : <span class="muted">none (a ping)</span>}</dd>
                <dt>webhook-id</dt>
                <dd>
                  <code>{a.messageId}</code> <span class="muted">(the same on every attempt and replay)</span>
                </dd>
              </dl>
              <div class="row-actions">
                <button type="button" disabled={redeliver.busy} onClick={() => void redeliver.run(a.deliveryId)}>
                  Redeliver
                </button>
              </div>
              {queued && <Notice>{queued}</Notice>}
              <ProblemLine problem={redeliver.problem} />
            </section>
            <section class="card" aria-labelledby="request-heading">
              <h2 id="request-heading">Request</h2>
              <p>
                <code class="header-value">POST {a.request.url ?? '(URL not recorded)'}</code>
              </p>
              <h3>Headers</h3>
              <Headers
                caption="Request headers as sent"
                headers={
                  a.request.headers
                    ? Object.entries(a.request.headers).sort(([x], [y]) => x.localeCompare(y, 'en', { sensitivity: 'base' }))
                    : null
                }
              />
              <h3>Body</h3>
              <p class="hint">Pretty-printed here; Copy copies the exact bytes that were sent and signed.</p>
              <Copyable label="Request body" value={pretty(a.request.body)} copies={a.request.body} multiline />
            </section>
            <section class="card" aria-labelledby="response-heading">
              <h2 id="response-heading">Response</h2>
              <p>
                {a.response.statusCode !== null ? (
                  <>
                    Status <strong>{a.response.statusCode}</strong>
                  </>
                ) : (
                  <span class="attempt-error">No answer{a.error ? `: ${a.error}` : ''}</span>
                )}
              </p>
              <h3>Headers</h3>
              <Headers caption="Response headers" headers={a.response.headers} />
              <h3>Body (the first 1,024 characters)</h3>
              {a.response.body ? <Copyable label="Response body" value={a.response.body} multiline /> : <p class="muted">Empty.</p>}
            </section>
          </>
        )}
      </Loaded>
    </Page>
  );
}
