import { Migration } from '@mikro-orm/migrations';

/**
 * `leadwire_refuse(reason)`: fails the statement that calls it, so that everything the statement wrote rolls back.
 * The single write is one statement (contacts/v1/one-trip-sql.ts), with no transaction the client could roll back
 * after reading an answer; where that statement finds it must not commit (its client gave up on it, another request
 * answered its Idempotency-Key after its snapshot, the key's window was spent at the last moment) it calls this in its
 * final select. SQLSTATE LW001, the reason as the message: the caller tells the cases apart by it.
 */
export class Migration20261128150000 extends Migration {
  override name = 'Migration20261128150000';

  override up(): void | Promise<void> {
    this.addSql(`create function "leadwire_refuse"("reason" text) returns int language plpgsql volatile as $$
begin
  raise exception using errcode = 'LW001', message = "reason";
end
$$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "leadwire_refuse"(text);`);
  }
}
