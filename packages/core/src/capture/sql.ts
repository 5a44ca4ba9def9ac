/** Statements of the lead-capture intake. Times come in as parameters from `deps.clock`. */

/** What intake needs of an organization: its plan and contact cap. */
export const CAPTURE_ORG = `select id, plan, contact_booster from organizations where id = ?::uuid`;

/** One submission kept in the organization's hourly window, in the counters shared by every process. */
export const COUNT_CAPTURE = `
insert into rate_limit_counters (bucket, window_start, count) values (?, ?::timestamptz, 1)
on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
returning count`;
