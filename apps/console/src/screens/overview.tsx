import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { type ChartSeries, Legend, TimeChart } from '../ui/chart.tsx';
import { Link, Loaded, Page, When } from '../ui/common.tsx';
import { useLoad } from '../ui/use-load.ts';

type Overview = Outputs['activity']['overview'];
type Line = Overview['api'][number];
type Period = Overview['period'];

export const PERIODS: { value: Period; label: string; span: string }[] = [
  { value: '24h', label: '24 hours', span: 'the last 24 hours, by UTC hour' },
  { value: '7d', label: '7 days', span: 'the last 7 days, by UTC day' },
  { value: '30d', label: '30 days', span: 'the last 30 days, by UTC day' },
];

/** Outcomes in the order they stack, with the words and colours the charts and their tables use. */
const API_OUTCOMES = [
  { outcome: '2xx', label: 'Succeeded (2xx)', color: '#2b7a4b' },
  { outcome: '4xx', label: 'Refused (4xx)', color: '#c47f00' },
  { outcome: '429', label: 'Rate limited (429)', color: '#a4161a' },
  { outcome: '5xx', label: 'Server error (5xx)', color: '#6b2c91' },
];
const DELIVERY_OUTCOMES = [
  { outcome: 'succeeded', label: 'Succeeded', color: '#2b7a4b' },
  { outcome: 'failed', label: 'Failed', color: '#a4161a' },
  { outcome: 'over_cap', label: 'Skipped over the hourly cap', color: '#c47f00' },
  { outcome: 'skipped', label: 'Skipped (endpoint disabled)', color: '#8a93a6' },
  { outcome: 'pending', label: 'Pending', color: '#1a4fd6' },
];
const VIEW_OUTCOMES = [
  { outcome: 'cookie', label: 'Page views', color: '#1a4fd6' },
  { outcome: 'anonymous', label: 'Anonymous page views (GPC)', color: '#8a93a6' },
];
const FORM_COLORS = ['#1a4fd6', '#2b7a4b', '#c47f00', '#6b2c91', '#a4161a'];

const n = (v: number) => v.toLocaleString('en-US');
const sum = (counts: number[][], len: number) => Array.from({ length: len }, (_, i) => counts.reduce((a, c) => a + (c[i] ?? 0), 0));

/** Chart series per outcome, summed over every subject. */
function byOutcome(lines: Line[], outcomes: typeof API_OUTCOMES, len: number): ChartSeries[] {
  return outcomes.map((o) => ({
    label: o.label,
    color: o.color,
    counts: sum(
      lines.filter((l) => l.outcome === o.outcome).map((l) => l.counts),
      len,
    ),
  }));
}

/** `12 requests: 10 succeeded (2xx), 2 refused (4xx).` */
function summary(noun: string, series: ChartSeries[]): string {
  const totals = series.map((s) => [s.label, s.counts.reduce((a, b) => a + b, 0)] as const).filter(([, v]) => v > 0);
  const all = totals.reduce((a, [, v]) => a + v, 0);
  if (all === 0) return `No ${noun} in this period.`;
  return `${n(all)} ${noun}: ${totals.map(([label, v]) => `${n(v)} ${label.toLowerCase()}`).join(', ')}.`;
}

/** Totals per subject (a key, an endpoint) and outcome: the chart's numbers as a table. */
function SubjectTable(props: { caption: string; subject: string; lines: Line[]; outcomes: typeof API_OUTCOMES }) {
  const subjects = [...new Set(props.lines.map((l) => l.subject))];
  if (subjects.length === 0) return null;
  const total = (subject: string, outcome: string) => props.lines.find((l) => l.subject === subject && l.outcome === outcome)?.total ?? 0;
  const shown = props.outcomes.filter((o) => props.lines.some((l) => l.outcome === o.outcome));
  return (
    // Focusable, so a keyboard can scroll it sideways when the columns outgrow a phone.
    <div class="table-scroll" tabIndex={0} role="region" aria-label={props.caption}>
      <table class="numbers">
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.subject}</th>
            {shown.map((o) => (
              <th scope="col" key={o.outcome}>
                {o.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {subjects.map((s) => (
            <tr key={s}>
              <th scope="row">{props.lines.find((l) => l.subject === s)?.name}</th>
              {shown.map((o) => (
                <td key={o.outcome}>{n(total(s, o.outcome))}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A chart with what it counts, its period and time zone, a link to the screen behind it, and its text alternative. */
function ChartCard(props: {
  id: string;
  title: string;
  to: string;
  linkLabel: string;
  span: string;
  data: Overview;
  series: ChartSeries[];
  noun: string;
  children?: ComponentChildren;
}) {
  return (
    <section class="card chart-card" aria-labelledby={props.id}>
      <div class="chart-head">
        <h2 id={props.id}>{props.title}</h2>
        <Link to={props.to}>{props.linkLabel}</Link>
      </div>
      <figure>
        <figcaption>
          {props.title}, {props.span}. Times in UTC.
        </figcaption>
        <TimeChart buckets={props.data.buckets} bucket={props.data.bucket} series={props.series} />
        <Legend series={props.series} />
        <p class="chart-summary">
          {summary(
            props.noun,
            props.series.filter((s) => !s.line),
          )}
        </p>
      </figure>
      {props.children}
    </section>
  );
}

/** The period buttons of the overview and the analytics, each saying whether it is the one shown. */
export function PeriodSwitch({ period, onPeriod }: { period: Period; onPeriod: (p: Period) => void }) {
  return (
    <div class="period" role="group" aria-label="Period">
      {PERIODS.map((p) => (
        <button key={p.value} type="button" aria-pressed={p.value === period} onClick={() => onPeriod(p.value)}>
          {p.label}
        </button>
      ))}
    </div>
  );
}

/** `/`: the workspace at a glance: what failed now, the limits in use, and its activity over 24 hours to 30 days. */
export function Overview({ me }: ScreenProps) {
  const [period, setPeriod] = useState<Period>('24h');
  const load = useLoad(() => api.activity.overview.query({ period }), [period]);
  const span = PERIODS.find((p) => p.value === period)!.span;
  return (
    <Page title="Overview" intro={`Signed in as ${me.name ?? me.email}. What your workspace sent, received and collected.`}>
      <PeriodSwitch period={period} onPeriod={setPeriod} />
      <Loaded load={load} what="the overview">
        {(o) => <Activity o={o} span={span} manager={isManager(me)} />}
      </Loaded>
    </Page>
  );
}

function Activity({ o, span, manager }: { o: Overview; span: string; manager: boolean }) {
  const len = o.buckets.length;
  const charts = useMemo(() => {
    const forms = [...new Set(o.submissions.map((l) => l.subject))];
    return {
      api: byOutcome(o.api, API_OUTCOMES, len),
      deliveries: o.deliveries ? byOutcome(o.deliveries, DELIVERY_OUTCOMES, len) : null,
      submissions: forms.slice(0, FORM_COLORS.length).map((f, i) => {
        const lines = o.submissions.filter((l) => l.subject === f);
        return {
          label: lines[0]!.name,
          color: FORM_COLORS[i]!,
          counts: sum(
            lines.map((l) => l.counts),
            len,
          ),
        };
      }),
      views: [
        ...byOutcome(o.pageViews, VIEW_OUTCOMES, len),
        {
          label: 'Visitors',
          color: '#1d2433',
          line: true,
          counts: sum(
            o.pageViews.filter((l) => l.outcome === 'visitors').map((l) => l.counts),
            len,
          ),
        },
      ],
    };
  }, [o]);
  const visitors = charts.views.at(-1)!.counts;
  return (
    <>
      {o.failing && o.failing.length > 0 && <Failing endpoints={o.failing} />}
      <Limits o={o} />
      <div class="charts">
        <ChartCard
          id="api-chart"
          title="API requests"
          to="/keys"
          linkLabel="API keys"
          span={span}
          data={o}
          series={charts.api}
          noun="requests"
        >
          <SubjectTable caption="API requests by key" subject="Key" lines={o.api} outcomes={API_OUTCOMES} />
        </ChartCard>
        {o.deliveries && charts.deliveries && (
          <ChartCard
            id="deliveries-chart"
            title="Webhook deliveries"
            to="/webhooks"
            linkLabel="Webhooks"
            span={span}
            data={o}
            series={charts.deliveries}
            noun="deliveries"
          >
            <SubjectTable caption="Webhook deliveries by endpoint" subject="Endpoint" lines={o.deliveries} outcomes={DELIVERY_OUTCOMES} />
          </ChartCard>
        )}
        <ChartCard
          id="submissions-chart"
          title="Form submissions"
          to="/forms"
          linkLabel="Forms"
          span={span}
          data={o}
          series={charts.submissions}
          noun="submissions"
        />
        <ChartCard
          id="views-chart"
          title="Page views and visitors"
          to="/analytics"
          linkLabel="Website analytics"
          span={span}
          data={o}
          series={charts.views}
          noun="page views"
        >
          <p class="chart-summary">
            {n(Math.max(0, ...visitors))} visitors at most in one {o.bucket} (visitors are browsers with the snippet's cookie; anonymous
            views are counted without one).
          </p>
        </ChartCard>
      </div>
      {!manager && <p class="muted">Webhook deliveries are shown to owners and admins.</p>}
    </>
  );
}

/** Endpoints failing now, at the top like Svix's portal: how many failures in a row, the last error, when it stops. */
function Failing({ endpoints }: { endpoints: NonNullable<Overview['failing']> }) {
  return (
    <section class="card failing" aria-labelledby="failing-heading">
      <h2 id="failing-heading">Endpoints failing now</h2>
      <ul>
        {endpoints.map((e) => (
          <li key={e.id}>
            <Link to={`/webhooks/${e.id}`}>{e.url}</Link>
            <p>
              {e.enabled ? (
                <>
                  {e.failureCount} {e.failureCount === 1 ? 'failure' : 'failures'} in a row; disabled after {e.failuresUntilDisabled} more.
                </>
              ) : (
                <>Disabled: {e.disabledReason ?? 'by its owner'}.</>
              )}{' '}
              {e.lastError && (
                <>
                  Last error: <span class="attempt-error">{e.lastError}</span> (<When at={e.lastFailureAt} />)
                </>
              )}
            </p>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Meter(props: { label: string; used: number; limit: number; children?: ComponentChildren }) {
  return (
    <li>
      <span class="meter-label">{props.label}</span>
      <meter min={0} max={props.limit} value={props.used} aria-label={props.label} />
      <span>
        {n(props.used)} of {n(props.limit)}
        {props.children}
      </span>
    </li>
  );
}

function Limits({ o }: { o: Overview }) {
  const { deliveries, keys, contacts } = o.limits;
  return (
    <section class="card limits" aria-labelledby="limits-heading">
      <h2 id="limits-heading">Limits in use</h2>
      <ul class="meters">
        {deliveries && (
          <Meter label="Webhook deliveries this hour" used={deliveries.used} limit={deliveries.limit}>
            {deliveries.overCap > 0 && <>, {n(deliveries.overCap)} skipped over the cap</>}; resets <When at={deliveries.resetsAt} utc />
          </Meter>
        )}
        {keys.map((k) => (
          <Meter key={k.id} label={`${k.name}: requests this minute`} used={k.used} limit={k.limit} />
        ))}
        <Meter label={`Contacts (${contacts.plan} plan)`} used={contacts.used} limit={contacts.limit} />
      </ul>
      {keys.length === 0 && <p class="muted">No Public key has made a request this minute (each may make 600 a minute).</p>}
    </section>
  );
}
