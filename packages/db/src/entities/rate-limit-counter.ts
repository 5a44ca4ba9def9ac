import { defineEntity, p } from '@mikro-orm/core';

/** Fixed-window request counters shared by every server process on the database. */
export const RateLimitCounterSchema = defineEntity({
  name: 'RateLimitCounter',
  tableName: 'rate_limit_counters',
  properties: {
    bucket: p.text().primary(),
    windowStart: p.datetime().primary(),
    count: p.integer(),
  },
});
export class RateLimitCounter extends RateLimitCounterSchema.class {}
RateLimitCounterSchema.setClass(RateLimitCounter);
