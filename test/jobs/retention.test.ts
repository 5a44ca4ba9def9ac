import { cleanupJob, runCleanup } from '#core/jobs/cleanup.ts';
import { SLICE } from '#core/jobs/slices.ts';
import { builtStatements, type Db } from '@leadwire/db';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';

/**
 * The bounds on the tables that grow with traffic (docs/operating.md, "Retention"), run by the hourly cleanup with
 * the configured knobs. Bounds here differ from the defaults and from each other, so a statement reading the wrong
 * knob deletes the wrong rows.
 */
let t: TestApp;
let org: string;
let endpoint: string;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  t = await initTestApp({
    EVENT_RETENTION_DAYS: '10',
    PAGE_VIEW_RETENTION_DAYS: '20',
    ANONYMOUS_PAGE_VIEW_RETENTION_DAYS: '5',
    WORKFLOW_RUN_RETENTION_DAYS: '7',
    DELIVERY_LOG_RETENTION_DAYS: '3',
    ACTIVITY_RETENTION_DAYS: '12',
  });
  ({ orgId: org } = await t.newOrg());
  const [e] = await t.sql<{ id: string }>(
    `insert into webhook_endpoints (organization_id, url, secret) values (?, 'https://receiver.test/', 'whsec_x') returning id`,
    [org],
  );
  endpoint = e!.id;
});
afterAll(async () => t?.close());
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});

const daysAgo = (days: number, ms = 0) => new Date(t.clock.now().getTime() - days * DAY_MS - ms);

async function clear() {
  for (const table of ['outbox_pending', 'outbox_events', 'page_views', 'workflow_runs', 'webhook_deliveries', 'activity_hourly'])
    await t.sql(`delete from ${table}`);
}

/** One labelled row per table; an event is dispatched (out of outbox_pending) unless `pending`. */
const seed = {
  event: async (label: string, at: Date, pending = false) => {
    await t.sql(`insert into outbox_events (organization_id, event, payload, created_at) values (?, 'contact.updated', ?::jsonb, ?)`, [
      org,
      JSON.stringify({ label }),
      at,
    ]);
    // The insert trigger queues an event only when an endpoint subscribes to it: the queue is set as the label says.
    await t.sql(`delete from outbox_pending where event_id in (select id from outbox_events where payload->>'label' = ?)`, [label]);
    if (pending)
      await t.sql(
        `insert into outbox_pending (event_id, created_at) select id, created_at from outbox_events where payload->>'label' = ?`,
        [label],
      );
  },
  view: async (label: string, at: Date, anonymous: boolean) => {
    const [c] = anonymous
      ? [{ id: null }]
      : await t.sql<{ id: string }>(`insert into contacts (organization_id, email) values (?, ?) returning id`, [
          org,
          `${label}@views.example`,
        ]);
    await t.sql(
      `insert into page_views (id, organization_id, contact_id, visitor_id, url, created_at) values (gen_random_uuid(), ?, ?, 'v', ?, ?)`,
      [org, c.id, `https://site.example/${label}`, at],
    );
  },
  run: async (label: string, at: Date, finished: boolean) => {
    await t.sql(
      `insert into workflow_runs (id, organization_id, workflow, status, finished_at, created_at) values (gen_random_uuid(), ?, ?, ?, ?, ?)`,
      [org, label, finished ? 'completed' : 'running', finished ? at : null, at],
    );
  },
  /** An hour of the overview's counts, its label as the series. */
  activity: async (label: string, at: Date) => {
    await t.sql(`insert into activity_hourly (organization_id, series, hour, subject, outcome, count) values (?, ?, ?, '', '', 1)`, [
      org,
      label,
      at,
    ]);
  },
  delivery: async (label: string, at: Date) => {
    await t.sql(`insert into webhook_deliveries (organization_id, endpoint_id, event, body, created_at) values (?, ?, ?, '{}', ?)`, [
      org,
      endpoint,
      label,
      at,
    ]);
  },
};

async function left() {
  const col = async (q: string) => (await t.sql<{ v: string }>(q)).map((r) => r.v).sort();
  return {
    events: await col(`select payload->>'label' as v from outbox_events`),
    views: await col(`select substr(url, 22) as v from page_views`),
    runs: await col(`select workflow as v from workflow_runs`),
    deliveries: await col(`select event as v from webhook_deliveries`),
    activity: await col(`select series as v from activity_hourly`),
  };
}

async function runJob() {
  const job = cleanupJob(t.runtime.deps);
  await job.handle(job.parse({}));
}

it('deletes the rows past each configured bound and keeps the rows inside it', async () => {
  await clear();
  await seed.event('old', daysAgo(11));
  await seed.event('old-but-pending', daysAgo(30), true);
  await seed.event('inside', daysAgo(9));
  await seed.view('contact-old', daysAgo(21), false);
  await seed.view('contact-inside', daysAgo(19), false);
  await seed.view('anonymous-old', daysAgo(6), true);
  await seed.view('anonymous-inside', daysAgo(4), true);
  await seed.run('finished-old', daysAgo(8), true);
  await seed.run('running-old', daysAgo(30), false);
  await seed.run('finished-inside', daysAgo(6), true);
  await seed.delivery('old', daysAgo(4));
  await seed.delivery('inside', daysAgo(2));
  await seed.activity('old', daysAgo(13));
  await seed.activity('inside', daysAgo(11));
  await runJob();
  expect(await left()).toEqual({
    events: ['inside', 'old-but-pending'],
    views: ['anonymous-inside', 'contact-inside'],
    runs: ['finished-inside', 'running-old'],
    deliveries: ['inside'],
    activity: ['inside'],
  });
});

it('keeps each row until the clock passes its cut-off, to the millisecond', async () => {
  await clear();
  t.clock.freeze();
  await seed.event('edge', daysAgo(10));
  await seed.view('contact-edge', daysAgo(20), false);
  await seed.view('anonymous-edge', daysAgo(5), true);
  await seed.run('edge', daysAgo(7), true);
  await seed.delivery('edge', daysAgo(3));
  await seed.activity('edge', daysAgo(12));
  const all = { events: ['edge'], views: ['anonymous-edge', 'contact-edge'], runs: ['edge'], deliveries: ['edge'], activity: ['edge'] };
  await runJob();
  expect(await left()).toEqual(all);
  t.clock.advance(1);
  await runJob();
  expect(await left()).toEqual({ events: [], views: [], runs: [], deliveries: [], activity: [] });
});

it('keeps the rows forever when a bound is 0', async () => {
  await clear();
  await seed.event('ancient', daysAgo(3_000));
  await seed.view('ancient', daysAgo(3_000), true);
  await seed.run('ancient', daysAgo(3_000), true);
  await seed.delivery('ancient', daysAgo(3_000));
  await seed.activity('ancient', daysAgo(3_000));
  const none = { events: 0, pageViews: 0, anonymousPageViews: 0, workflowRuns: 0, webhookDeliveries: 0, activity: 0 };
  const result = await runCleanup(t.runtime.deps.db, t.clock.now(), none);
  expect(result).toMatchObject(none);
  expect(await left()).toEqual({
    events: ['ancient'],
    views: ['ancient'],
    runs: ['ancient'],
    deliveries: ['ancient'],
    activity: ['ancient'],
  });
});

it('works through a backlog larger than a slice in statements of at most one slice each', async () => {
  await clear();
  const backlog = 2 * SLICE + 1;
  await t.sql(
    `insert into outbox_events (organization_id, event, payload, created_at)
     select ?, 'contact.updated', '{}'::jsonb, ?::timestamptz - g * interval '1 second' from generate_series(1, ?) g`,
    [org, daysAgo(11), backlog],
  );
  await t.sql('delete from outbox_pending');
  await t.sql(
    `insert into page_views (id, organization_id, visitor_id, url, created_at)
     select gen_random_uuid(), ?, 'v', 'https://site.example/x', ?::timestamptz - g * interval '1 second' from generate_series(1, ?) g`,
    [org, daysAgo(21), backlog],
  );
  // The real database, with each statement's answer noted on the way back.
  const slices: number[] = [];
  const db = t.runtime.deps.db;
  const counting: Db = new Proxy(db, {
    get: (target, prop, receiver) =>
      prop === 'run'
        ? async (...args: Parameters<Db['run']>) => {
            const rows = await target.run(...args);
            const n = (rows[0] as { n?: unknown } | undefined)?.n;
            if (typeof n === 'number' && n > 0) slices.push(n);
            return rows;
          }
        : Reflect.get(target, prop, receiver),
  });
  const result = await runCleanup(counting, t.clock.now(), {
    events: 10,
    pageViews: 20,
    anonymousPageViews: 0,
    workflowRuns: 0,
    webhookDeliveries: 0,
    activity: 0,
  });
  expect(result).toMatchObject({ events: backlog, pageViews: backlog });
  // Events then page views, each in two full slices and a short one that ends its loop.
  expect(slices).toEqual([SLICE, SLICE, 1, SLICE, SLICE, 1]);
  expect(await t.sql('select (select count(*) from outbox_events)::int as e, (select count(*) from page_views)::int as v')).toEqual([
    { e: 0, v: 0 },
  ]);
});

it('finds old rows through the BRIN index: a run with nothing left to delete reads a range of the table, not all of it', async () => {
  await clear();
  // 40,000 views, one every 20 minutes back from today: about 555 days: the oldest 55 days are past a 500-day bound, the rest are not.
  await t.sql(
    `insert into page_views (id, organization_id, visitor_id, url, created_at)
     select gen_random_uuid(), ?, 'v', 'https://site.example/some/page', ?::timestamptz - (40000 - g) * interval '20 minutes'
     from generate_series(1, 40000) g`,
    [org, t.clock.now()],
  );
  await t.sql(`select brin_summarize_new_values('page_views_created_brin')`);
  await t.sql('analyze page_views');
  const bounds = { events: 0, pageViews: 500, anonymousPageViews: 0, workflowRuns: 0, webhookDeliveries: 0, activity: 0 };
  const first = await runCleanup(t.runtime.deps.db, t.clock.now(), bounds);
  expect(first.pageViews).toBeGreaterThan(0);

  const text = builtStatements().find((s) =>
    /^with "doomed" as \(select "id" from "page_views" where "created_at" < \S+ - make_interval\(days => \$2::int\) limit/.test(s.text),
  )!.text;
  const pages = (await t.sql<{ pages: number }>(`select relpages as pages from pg_class where relname = 'page_views'`))[0]!.pages;
  // As a running server plans it: a generic plan, prepared once, the time and the bound as parameters.
  const plan = await t.runtime.deps.db.transaction(async (tx) => {
    await tx.raw('set local plan_cache_mode = force_generic_plan');
    await tx.raw(`prepare retention_probe as ${text}`);
    const now = t.clock.now().toISOString();
    const { rows } = await tx.raw(`explain (analyze, buffers, format json) execute retention_probe('${now}', 500)`);
    await tx.raw('deallocate retention_probe');
    return (rows[0] as { 'QUERY PLAN': unknown[] })['QUERY PLAN'][0] as { Plan: PlanNode };
  });
  const nodes = flatten(plan.Plan);
  expect(nodes.some((n) => n['Index Name'] === 'page_views_created_brin')).toBe(true);
  const heap = nodes.find((n) => n['Node Type'] === 'Bitmap Heap Scan')!;
  expect(heap['Actual Rows']).toBe(0);
  // One BRIN range is 128 pages; the table is several times that.
  expect(pages).toBeGreaterThan(4 * 128);
  expect((heap['Lossy Heap Blocks'] ?? 0) + (heap['Exact Heap Blocks'] ?? 0)).toBeLessThanOrEqual(2 * 128);
});

type PlanNode = {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Lossy Heap Blocks'?: number;
  'Exact Heap Blocks'?: number;
  Plans?: PlanNode[];
};
const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

it("bounds custom website events by the page views' two knobs: identified ones by the longer, anonymous ones by the shorter", async () => {
  await t.sql('delete from tracking_events');
  const [c] = await t.sql<{ id: string }>(`insert into contacts (organization_id, email) values (?, 'events@views.example') returning id`, [
    org,
  ]);
  for (const [name, contact, at] of [
    ['contact-old', c!.id, daysAgo(21)],
    ['contact-inside', c!.id, daysAgo(19)],
    ['anonymous-old', null, daysAgo(6)],
    ['anonymous-inside', null, daysAgo(4)],
  ] as const)
    await t.sql(
      `insert into tracking_events (organization_id, contact_id, name, url, created_at) values (?, ?, ?, 'https://site.example/', ?)`,
      [org, contact, name, at],
    );
  const result = await runCleanup(t.runtime.deps.db, t.clock.now(), {
    events: 0,
    pageViews: 20,
    anonymousPageViews: 5,
    workflowRuns: 0,
    webhookDeliveries: 0,
    activity: 0,
  });
  expect(result).toMatchObject({ customEvents: 1, anonymousCustomEvents: 1 });
  expect((await t.sql<{ name: string }>('select name from tracking_events order by name')).map((r) => r.name)).toEqual([
    'anonymous-inside',
    'contact-inside',
  ]);
});
