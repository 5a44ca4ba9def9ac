import { defineEntity, p } from '@mikro-orm/core';
import { Organization } from './organization.ts';

/**
 * The console's overview, per workspace and UTC hour: counts rolled up from what the server already records, never
 * from Prometheus labels. `series` says what is counted and from where:
 * - `api`: /v1 requests by key (`subject`) and outcome (`2xx`, `4xx`, `429`, `5xx`), tallied in each server process's
 *   memory as responses go out and added here every few seconds (limits/api-usage.ts), so no request writes a row;
 * - `deliveries`: webhook deliveries by endpoint and state (`succeeded`, `failed`, `over_cap`, `skipped`, `pending`),
 *   `submissions` by form, `page_views` (`cookie` or `anonymous`), `visitors` (distinct cookie ids in the hour) and
 *   `visitors_day` (distinct in the UTC day starting at `hour`): recomputed by the `activity.rollup` job from the
 *   delivery log, the submissions and the page views.
 * Only counts above zero have a row; rows older than ACTIVITY_RETENTION_DAYS are deleted by the hourly cleanup.
 */
export const ActivityHourlySchema = defineEntity({
  name: 'ActivityHourly',
  tableName: 'activity_hourly',
  indexes: [
    {
      name: 'activity_hourly_hour_brin',
      expression: `create index "activity_hourly_hour_brin" on "activity_hourly" using brin ("hour") with (autosummarize = on)`,
    },
  ],
  properties: {
    organization: () => p.manyToOne(Organization).deleteRule('cascade').primary(),
    series: p.text().primary(),
    hour: p.datetime().primary(),
    /** The key, endpoint or form counted; empty when the series has none. */
    subject: p.text().primary(),
    outcome: p.text().primary(),
    count: p.integer(),
  },
});
export class ActivityHourly extends ActivityHourlySchema.class {}
ActivityHourlySchema.setClass(ActivityHourly);
