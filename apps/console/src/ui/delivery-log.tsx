import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { Link, Loaded, Notice, ProblemLine, When } from './common.tsx';
import { Form, Select, TextInput } from './form.tsx';
import { useAction, useLoad } from './use-load.ts';
import { Table } from './table.tsx';

type Attempt = Outputs['webhooks']['deliveries']['items'][number];
type Outcome = Attempt['outcome'];

const PERIODS = [
  { value: '', label: 'The last 30 days' },
  { value: '1', label: 'The last hour' },
  { value: '24', label: 'The last 24 hours' },
  { value: '168', label: 'The last 7 days' },
] as const;

const OUTCOMES = [
  { value: '', label: 'Any outcome' },
  { value: 'succeeded', label: 'Succeeded' },
  { value: 'failed', label: 'Failed' },
  { value: 'blocked', label: 'Blocked (unsafe address)' },
  { value: 'skipped', label: 'Skipped' },
  // Listed only when asked for: an endpoint's filter may keep back far more events than it sends.
  { value: 'filtered', label: 'Filtered (by the endpoint’s filter)' },
] as const;

/** How often, and how many times, the log looks again for a delivery just queued (it is sent within moments). */
const WATCH_EVERY_MS = 1000;
const WATCH_TIMES = 30;

export const outcomeClass = (o: Outcome) => (o === 'succeeded' ? 'badge on' : o === 'skipped' || o === 'filtered' ? 'badge' : 'badge off');

/**
 * Deliveries just queued that the log should show: by id (a test, a redelivery), or as a number of new ones (a
 * recovery, whose answer names no ids). `key` tells one request from the next.
 */
export interface Watch {
  key: number;
  ids: string[];
  count: number;
}

export const watchIds = (ids: string[]): Watch => ({ key: Date.now(), ids, count: 0 });

/**
 * The delivery log of one endpoint, newest first, with its filters. While `watch` names deliveries it does not show
 * yet, it looks again every second (at most 30 times), so nobody has to reload to see a test arrive.
 */
export function DeliveryLog(props: { id: string; events: string[]; watch: Watch | null; onQueued: (w: Watch) => void }) {
  const [outcome, setOutcome] = useState<'' | Outcome>('');
  const [event, setEvent] = useState('');
  const [period, setPeriod] = useState<'' | '1' | '24' | '168'>('');
  const [draft, setDraft] = useState('');
  const [search, setSearch] = useState('');
  const [older, setOlder] = useState<{ items: Attempt[]; nextCursor: string | null } | null>(null);
  // The period is counted back from when it was chosen, so paging older attempts keeps the same window.
  const since = useMemo(() => (period ? new Date(Date.now() - Number(period) * 3_600_000).toISOString() : ''), [period]);
  const filters = {
    id: props.id,
    ...(outcome ? { outcome } : {}),
    ...(event ? { event } : {}),
    ...(since ? { since } : {}),
    ...(search ? { search } : {}),
  };
  const log = useLoad(() => api.webhooks.deliveries.query({ ...filters, limit: 25 }), [props.id, outcome, event, since, search]);
  useEffect(() => setOlder(null), [props.id, outcome, event, since, search]);
  const searchError = log.state === 'failed' ? log.problem.fields.search : undefined;

  const seen = log.state === 'ready' ? new Set(log.data.items.map((a) => a.deliveryId)) : new Set<string>();
  const [looks, setLooks] = useState(0);
  const baseline = useRef(new Set<string>());
  const watch = props.watch;
  useEffect(() => {
    setLooks(0);
    baseline.current = seen;
  }, [watch?.key]);
  const fresh = [...seen].filter((d) => !baseline.current.has(d)).length;
  const waiting = Boolean(watch) && (watch!.ids.some((d) => !seen.has(d)) || fresh < watch!.count) && looks < WATCH_TIMES;
  useEffect(() => {
    if (log.state !== 'ready' || log.refreshing || !waiting) return;
    const timer = setTimeout(() => {
      setLooks((n) => n + 1);
      log.reload();
    }, WATCH_EVERY_MS);
    return () => clearTimeout(timer);
  }, [log, waiting, looks]);

  const more = useAction(async (cursor: string) => {
    const page = await api.webhooks.deliveries.query({ ...filters, limit: 25, cursor });
    setOlder((o) => ({ items: [...(o?.items ?? []), ...page.items], nextCursor: page.nextCursor }));
  });
  const redeliver = useAction(async (deliveryId: string) => {
    const queued = await api.webhooks.redeliver.mutate({ id: props.id, deliveryId });
    props.onQueued(watchIds([queued.deliveryId]));
    return queued;
  });
  const [redelivered, setRedelivered] = useState<string | null>(null);

  const eventOptions = [{ value: '', label: 'Any event' }, ...['ping', ...props.events].map((e) => ({ value: e, label: e }))];
  const filtered = Boolean(outcome || event || since || search);
  return (
    <section class="card" aria-labelledby="log-heading">
      <h2 id="log-heading">Delivery log</h2>
      <div class="log-filters">
        <Select label="Outcome" value={outcome} options={OUTCOMES} onValue={setOutcome} />
        <Select label="Event" value={event} options={eventOptions} onValue={setEvent} />
        <Select label="Period" value={period} options={PERIODS} onValue={setPeriod} />
        <button type="button" onClick={log.reload} disabled={log.state === 'ready' && log.refreshing}>
          Refresh
        </button>
      </div>
      <Form class="log-search" label="Search the delivery log" onSubmit={() => setSearch(draft.trim())}>
        <TextInput
          label="Event or contact id"
          type="search"
          hint="An event's id (its id in the body), a contact's id in the payload, or a delivery or attempt id."
          value={draft}
          onValue={setDraft}
          error={searchError}
        />
        <div class="row-actions">
          <button type="submit">Search</button>
          {search && (
            <button
              type="button"
              onClick={() => {
                setDraft('');
                setSearch('');
              }}
            >
              Clear search
            </button>
          )}
        </div>
      </Form>
      {waiting && <p role="status">Waiting for the delivery to be sent…</p>}
      {redelivered && <Notice>{redelivered}</Notice>}
      <ProblemLine problem={redeliver.problem ?? more.problem} />
      <Loaded load={log} what="the delivery log">
        {(page) => {
          const items = [...page.items, ...(older?.items ?? [])];
          const next = older ? older.nextCursor : page.nextCursor;
          if (items.length === 0)
            return (
              <p class="empty">
                {filtered
                  ? 'No attempt matches these filters in the last 30 days.'
                  : 'Nothing has been delivered yet. Send a test to see the first attempt here.'}
              </p>
            );
          return (
            <>
              <Table
                class="delivery-log"
                busy={log.state === 'ready' && log.refreshing}
                caption="Delivery attempts, newest first"
                rows={items}
                rowKey={(a) => a.id}
                rowHeader={false}
                columns={[
                  { header: 'When', cell: (a) => <When at={a.at} /> },
                  { header: 'Event', cell: (a) => <code>{a.event}</code> },
                  {
                    header: 'Attempt',
                    cell: (a) => (
                      <>
                        {a.attempt === 0 ? '–' : a.attempt}
                        {a.manual && <span class="muted"> (manual)</span>}
                      </>
                    ),
                  },
                  { header: 'Outcome', cell: (a) => <span class={outcomeClass(a.outcome)}>{a.outcome}</span> },
                  { header: 'Status code', cell: (a) => a.statusCode ?? <span class="muted">none</span> },
                  { header: 'Duration', cell: (a) => (a.durationMs === null ? <span class="muted">–</span> : `${a.durationMs} ms`) },
                  {
                    header: 'Response',
                    class: 'response',
                    cell: (a) => (
                      <>
                        {a.error && <p class="attempt-error">{a.error}</p>}
                        {a.responseBody ? <pre class="excerpt">{a.responseBody}</pre> : !a.error && <span class="muted">empty</span>}
                      </>
                    ),
                  },
                  { header: 'Next attempt', cell: (a) => <When at={a.nextAttemptAt} never="none" /> },
                  {
                    header: 'Actions',
                    hidden: true,
                    cell: (a) => (
                      <div class="row-actions">
                        <Link
                          to={`/webhooks/${props.id}/attempts/${a.id}`}
                          label={`Details of ${a.event}, ${a.attempt === 0 ? 'skipped' : `attempt ${a.attempt}`}, ${new Date(a.at).toLocaleString()}`}
                        >
                          Details
                        </Link>
                        <button
                          type="button"
                          disabled={redeliver.busy}
                          aria-label={`Redeliver ${a.event} of ${new Date(a.at).toLocaleString()}`}
                          onClick={() =>
                            void redeliver.run(a.deliveryId).then((q) => {
                              if (q)
                                setRedelivered(
                                  q.state === 'pending'
                                    ? `${a.event} is queued again; its attempt appears here in a moment.`
                                    : `Not sent: ${q.skipReason ?? 'skipped'}.`,
                                );
                            })
                          }
                        >
                          Redeliver
                        </button>
                      </div>
                    ),
                  },
                ]}
              />
              {next && (
                <button type="button" disabled={more.busy} onClick={() => void more.run(next)}>
                  Show older attempts
                </button>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
