import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** One series of a chart: a label people read, its colour, a count per bucket; bars stack, a line is drawn over them. */
export interface ChartSeries {
  label: string;
  color: string;
  counts: number[];
  line?: boolean;
}

const HEIGHT = 180;

/** Bars stack by drawing each stack's running total from the top one down, so the lower parts paint over the upper. */
function stacked(series: ChartSeries[]): { data: (number | null)[][]; order: ChartSeries[] } {
  const bars = series.filter((s) => !s.line);
  const sums: number[][] = [];
  let running = bars[0]?.counts.map(() => 0) ?? [];
  for (const s of bars) {
    running = running.map((v, i) => v + (s.counts[i] ?? 0));
    sums.push(running);
  }
  const lines = series.filter((s) => s.line);
  // An empty bucket draws no bar (a zero-height bar is a stray dash).
  const bare = sums.reverse().map((sum) => sum.map((v) => (v === 0 ? null : v)));
  return { data: [...bare, ...lines.map((s) => s.counts)], order: [...bars.reverse(), ...lines] };
}

/**
 * A time chart drawn by uPlot on a canvas, hidden from screen readers: every chart of the console comes with its text
 * alternative beside it (a summary and a table), which is what assistive technology reads. Times are shown in UTC, as
 * the server counts them. The chart follows its box's width, so it fits a 390 px screen.
 */
export function TimeChart(props: { buckets: string[]; bucket: 'hour' | 'day'; series: ChartSeries[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const { data, order } = stacked(props.series);
    const xs = props.buckets.map((b) => Date.parse(b) / 1000);
    const bars = uPlot.paths.bars!({ size: [0.7, 40] });
    // Half a bucket of room either side, so the first and the last (current) bucket's bars are drawn whole.
    const half = (props.bucket === 'hour' ? 3600 : 86_400) / 2;
    const plot = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: {
          x: { time: true, range: (_u, min, max) => [min - half, max + half] },
          y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] },
        },
        axes: [
          {
            stroke: '#4d5668',
            grid: { show: false },
            // Ticks on whole buckets only: an hour's or a day's, never half of one.
            incrs: props.bucket === 'hour' ? [3600, 7200, 10_800, 21_600, 43_200] : [86_400, 172_800, 604_800],
            values: props.bucket === 'hour' ? '{HH}:{mm}' : '{MMM} {D}',
          },
          {
            stroke: '#4d5668',
            grid: { stroke: '#e6e9ef' },
            size: 44,
            values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : '')),
          },
        ],
        series: [
          {},
          ...order.map((s) =>
            s.line
              ? { label: s.label, stroke: s.color, width: 2, points: { show: false } }
              : { label: s.label, fill: s.color, stroke: s.color, paths: bars, points: { show: false } },
          ),
        ],
      },
      [xs, ...data],
      el,
    );
    const resized = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [props.buckets, props.series, props.bucket]);
  return <div class="chart" ref={box} aria-hidden="true" />;
}

/** The colours' key: each series' name beside its swatch (the swatch is decoration, the name says it). */
export function Legend({ series }: { series: ChartSeries[] }) {
  return (
    <ul class="legend">
      {series.map((s) => (
        <li key={s.label}>
          {/* Set through the CSSOM: the page's Content-Security-Policy refuses style attributes in markup. */}
          <span class={s.line ? 'swatch line' : 'swatch'} ref={(el) => el?.style.setProperty('--swatch', s.color)} />
          {s.label}
        </li>
      ))}
    </ul>
  );
}
