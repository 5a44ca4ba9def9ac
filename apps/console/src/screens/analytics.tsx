import { useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import type { ScreenProps } from '../screen.ts';
import { type ChartSeries, Legend, TimeChart } from '../ui/chart.tsx';
import { Copyable, Link, Loaded, Page, When } from '../ui/common.tsx';
import { Table } from '../ui/table.tsx';
import { useLoad } from '../ui/use-load.ts';
import { PERIODS, PeriodSwitch } from './overview.tsx';

type Website = Outputs['activity']['website'];
type Row = Website['pages'][number];

const n = (v: number) => v.toLocaleString('en-US');

type Goal = Outputs['tracking']['goals']['items'][number];

/** `tracking.goals` counts whole days back from now: each period of the switch as that many days. */
const GOAL_DAYS: Record<Website['period'], number> = { '24h': 1, '7d': 7, '30d': 30 };

/** The stub that queues calls made before the snippet loads (docs/website.md, "Custom events"). */
const TRACK_STUB = '<script>window.leadwire=window.leadwire||{q:[],track:function(){this.q.push(arguments)}}</script>';
const TRACK_EXAMPLE = "leadwire.track('signup', { plan: 'pro' })";

/** Custom events (`leadwire.track`) by name, as Plausible's goals: the whole site, anonymous visitors included. */
function Goals({ period }: { period: Website['period'] }) {
  const days = GOAL_DAYS[period];
  const span = `the last ${PERIODS.find((p) => p.value === period)!.label}`;
  const load = useLoad(() => api.tracking.goals.query({ days }), [days]);
  return (
    <section class="card" aria-labelledby="goals-heading">
      <h2 id="goals-heading">Goals (custom events)</h2>
      <Loaded load={load} what="the goals">
        {(g) =>
          g.items.length === 0 ? (
            <>
              <p class="muted">No custom events in {span}.</p>
              <p>
                Paste this stub above the tracking snippet, then call <code>leadwire.track</code>; each name becomes a goal:
              </p>
              <Copyable label="The stub" value={TRACK_STUB} />
              <Copyable label="A goal" value={TRACK_EXAMPLE} />
            </>
          ) : (
            <>
              <p class="hint">The whole site's custom events in {span}. Anonymous: from visitors not known as contacts.</p>
              <Table
                caption="Goals (custom events)"
                rows={g.items}
                rowKey={(r) => r.name}
                columns={[
                  { header: 'Goal', cell: (r: Goal) => <code>{r.name}</code> },
                  { header: 'Events', cell: (r) => n(r.total) },
                  { header: 'From contacts', cell: (r) => n(r.total - r.anonymous) },
                  { header: 'Anonymous', cell: (r) => n(r.anonymous) },
                ]}
              />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

/** A breakdown (pages, referrers, UTM values) as a short table: its value, views and visitors. */
function Breakdown(props: { title: string; column: string; rows: Row[]; empty: string; onPick?: (value: string) => void }) {
  const id = `top-${props.title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      {props.rows.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <Table
          caption={props.title}
          rows={props.rows}
          rowKey={(r) => r.value}
          columns={[
            {
              header: props.column,
              cell: (r) =>
                props.onPick ? (
                  <button type="button" class="link" aria-label={`Only ${r.value}`} onClick={() => props.onPick!(r.value)}>
                    {r.value}
                  </button>
                ) : (
                  r.value
                ),
            },
            { header: 'Visitors', cell: (r) => n(r.visitors) },
            { header: 'Page views', cell: (r) => n(r.views) },
          ]}
        />
      )}
    </section>
  );
}

/**
 * `/analytics`: the website as Plausible shows it, on one page: visitors and page views over time, top pages,
 * referrers, UTM sources and campaigns, the visitors who became contacts; the whole site or one page.
 */
export function Analytics(_: ScreenProps) {
  const [period, setPeriod] = useState<Website['period']>('7d');
  const [page, setPage] = useState<string | null>(null);
  const load = useLoad(() => api.activity.website.query({ period, ...(page ? { page } : {}) }), [period, page]);
  const span = PERIODS.find((p) => p.value === period)!.span;
  return (
    <Page
      title="Website analytics"
      intro={
        <>
          From the <Link to="/website">tracking snippet</Link>'s page views. Visitors are browsers with its first-party cookie; views under
          Global Privacy Control are counted without one. No address or location is kept.
        </>
      }
    >
      <PeriodSwitch period={period} onPeriod={setPeriod} />
      {page && (
        <p class="filter-line" role="status">
          Only <code>{page}</code>{' '}
          <button type="button" onClick={() => setPage(null)}>
            Show every page
          </button>
        </p>
      )}
      <Loaded load={load} what="the website's analytics">
        {(w) => {
          const series: ChartSeries[] = [
            { label: 'Page views', color: '#1a4fd6', counts: w.views },
            { label: 'Visitors', color: '#1d2433', counts: w.visitors, line: true },
          ];
          return (
            <>
              <section class="card" aria-labelledby="traffic-heading">
                <h2 id="traffic-heading">Visitors and page views</h2>
                <dl class="totals">
                  <div>
                    <dt>Visitors</dt>
                    <dd>{n(w.totals.visitors)}</dd>
                  </div>
                  <div>
                    <dt>Page views</dt>
                    <dd>{n(w.totals.views)}</dd>
                  </div>
                  <div>
                    <dt>Anonymous views</dt>
                    <dd>{n(w.totals.anonymousViews)}</dd>
                  </div>
                  <div>
                    <dt>Visitors who are contacts</dt>
                    <dd>{n(w.totals.identified)}</dd>
                  </div>
                </dl>
                <figure>
                  <figcaption>
                    {page ? `Views of ${page}` : 'Page views and visitors'}, {span}. Times in UTC.
                  </figcaption>
                  <TimeChart buckets={w.buckets} bucket={w.bucket} series={series} />
                  <Legend series={series} />
                  <p class="chart-summary">
                    {n(w.totals.views)} page views by {n(w.totals.visitors)} visitors; the busiest {w.bucket} had{' '}
                    {n(Math.max(0, ...w.views))} views.
                  </p>
                </figure>
              </section>
              <div class="charts">
                <Breakdown title="Top pages" column="Page" rows={w.pages} empty="No page views in this period." onPick={setPage} />
                <Breakdown title="Referrers" column="Source" rows={w.referrers} empty="No referrer: visitors came directly." />
                <Breakdown title="UTM sources" column="utm_source" rows={w.utmSources} empty="No utm_source in the viewed URLs." />
                <Breakdown title="UTM campaigns" column="utm_campaign" rows={w.utmCampaigns} empty="No utm_campaign in the viewed URLs." />
              </div>
              <section class="card" aria-labelledby="contacts-heading">
                <h2 id="contacts-heading">Visitors who became contacts</h2>
                {w.contacts.length === 0 ? (
                  <p class="muted">None in this period: visitors are identified by a tracked link, ?email= or a form they submit.</p>
                ) : (
                  <Table
                    caption="Visitors who became contacts"
                    rows={w.contacts}
                    rowKey={(c) => c.id}
                    columns={[
                      { header: 'Contact', cell: (c) => <Link to={`/contacts/${c.id}`}>{c.name ?? c.email ?? c.id}</Link> },
                      { header: 'Email', cell: (c) => c.email ?? <span class="muted">none</span> },
                      { header: 'Page views', cell: (c) => n(c.views) },
                      { header: 'Last seen', cell: (c) => <When at={c.lastSeenAt} /> },
                    ]}
                  />
                )}
                <p class="hint">Each contact's name opens its screen: its email and its consent history.</p>
              </section>
            </>
          );
        }}
      </Loaded>
      <Goals period={period} />
    </Page>
  );
}
