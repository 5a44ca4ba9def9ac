import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';

/**
 * Columns every table shares. Ids are UUIDs generated in the app AND defaulted in the database, so hot-path raw SQL
 * inserts and ORM inserts produce the same kind of key, and ids never reveal how many rows another tenant has.
 */
export const baseProperties = {
  id: p
    .uuid()
    .primary()
    .onCreate(() => randomUUID())
    .defaultRaw('gen_random_uuid()'),
  createdAt: p
    .datetime()
    .onCreate(() => new Date())
    .defaultRaw('now()'),
};

export const timestamps = {
  ...baseProperties,
  updatedAt: p
    .datetime()
    .onCreate(() => new Date())
    .onUpdate(() => new Date())
    .defaultRaw('now()'),
};
