/**
 * Deprecation of an operation, or of fields of one, declared once in the procedure's meta (`deprecated`) and read by
 * the REST surfaces (the headers of every answer) and by the OpenAPI documents (`deprecated: true`). The policy is in
 * docs/versioning.md: /v1 changes only additively; a removal is announced for at least DEPRECATION_MIN_DAYS and then
 * needs /v2.
 */

import type { Deprecation } from '../trpc.ts';

export type { Deprecation };

/** The shortest time between the announcement and the sunset (RFC 8594): six months, so a partner can plan a release. */
export const DEPRECATION_MIN_DAYS = 180;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MS_PER_DAY = 86_400_000;

function dayOf(what: string, day: string): Date {
  const d = new Date(`${day}T00:00:00Z`);
  if (!DAY.test(day) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) {
    throw new Error(`deprecation: ${what} must be a date YYYY-MM-DD, not ${JSON.stringify(day)}`);
  }
  return d;
}

/** A deprecation the policy allows, or an error naming the procedure: thrown when the routes are read, at start. */
export function checkDeprecation(procedure: string, d: Deprecation): Deprecation {
  const since = dayOf(`${procedure}'s since`, d.since);
  const sunset = dayOf(`${procedure}'s sunset`, d.sunset);
  const days = (sunset.getTime() - since.getTime()) / MS_PER_DAY;
  if (days < DEPRECATION_MIN_DAYS) {
    throw new Error(
      `deprecation: ${procedure} is announced ${days} days before its sunset; the policy is at least ${DEPRECATION_MIN_DAYS}`,
    );
  }
  if (!/^https?:\/\/\S+$/.test(d.notice)) throw new Error(`deprecation: ${procedure}'s notice must be an absolute URL`);
  return d;
}

/**
 * The three headers every answer of a deprecated operation carries: `Deprecation: @<unix seconds>` (RFC 9745's
 * structured date), `Sunset: <HTTP date>` (RFC 8594) and `Link: <notice>; rel="deprecation"` (RFC 9745).
 */
export function deprecationHeaders(d: Deprecation): Record<'deprecation' | 'sunset' | 'link', string> {
  return {
    deprecation: `@${Math.floor(dayOf('since', d.since).getTime() / 1000)}`,
    sunset: dayOf('sunset', d.sunset).toUTCString(),
    link: `<${d.notice}>; rel="deprecation"`,
  };
}
