import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { DB } from './statements.ts';

/**
 * Rows of `table` sent as one JSON array parameter, read back with the table's own column types
 * (`jsonb_populate_recordset(null::table, $n::jsonb)`): a batch of any size travels as one parameter of one statement,
 * so a single write and a batch of 100 run the same prepared statement, and no column type is written down twice.
 * Keys the table lacks are ignored; columns a row lacks are null. Alias it (`.as('v')`) and select `v.column`s.
 */
export const jsonRows = <T extends keyof DB>(table: T, json: unknown): RawBuilder<Selectable<DB[T]>> =>
  sql<Selectable<DB[T]>>`jsonb_populate_recordset(null::${sql.table(table)}, ${json}::jsonb)`;
