import { defineEntity, p } from '@mikro-orm/core';
import { ApiKey } from './api-key.ts';

/** The first response to a POST carrying an Idempotency-Key, replayed to retries for 24 hours. */
export const IdempotencyRecordSchema = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  properties: {
    apiKey: () => p.manyToOne(ApiKey).primary().deleteRule('cascade'),
    key: p.text().primary(),
    /** Method, path and body hashed together: the same key with another request is a conflict. */
    requestHash: p.text(),
    /** The status of the stored answer. Written in the transaction of the write it answers, so never seen half-done. */
    status: p.integer().nullable(),
    response: p.json<unknown>().nullable(),
    createdAt: p
      .datetime()
      .onCreate(() => new Date())
      .defaultRaw('now()')
      .index(),
  },
});
export class IdempotencyRecord extends IdempotencyRecordSchema.class {}
IdempotencyRecordSchema.setClass(IdempotencyRecord);
