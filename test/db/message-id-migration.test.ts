import { type MikroORM, openOrm } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

const BEFORE = 'Migration20261123120000';
const MIGRATION = 'Migration20261126043000';

describe(`${MIGRATION}: webhook_deliveries.message_id`, () => {
  let db: TestDatabase;
  let orm: MikroORM;
  const sql = <T>(query: string, params: unknown[] = []) => orm.em.fork().getConnection().execute<T[]>(query, params);

  beforeAll(async () => {
    db = await createTestDatabase('message_id_migration');
    orm = await openOrm(db.url, { pool: { min: 0, max: 2 } });
    await orm.migrator.up({ to: BEFORE });
  });
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it("gives replays made before it their first original's id, through replays of replays, and goes down and up again", async () => {
    const [org] = await sql<{ id: string }>(`insert into organizations (name) values ('m') returning id`);
    const [endpoint] = await sql<{ id: string }>(
      `insert into webhook_endpoints (organization_id, url, secret) values (?, 'https://receiver.test/', 'whsec_x') returning id`,
      [org!.id],
    );
    const delivery = async (replayOf: string | null) => {
      const [row] = await sql<{ id: string }>(
        `insert into webhook_deliveries (organization_id, endpoint_id, event, body, manual, replay_of) values (?, ?, 'ping', '{}', ?, ?) returning id`,
        [org!.id, endpoint!.id, replayOf !== null, replayOf],
      );
      return row!.id;
    };
    const original = await delivery(null);
    const replay = await delivery(original);
    const replayOfReplay = await delivery(replay);
    // The original was pruned with the delivery log: the replay stays its own message.
    const orphan = await delivery('00000000-0000-4000-8000-000000000000');

    await orm.migrator.up({ to: MIGRATION });
    const ids = async () =>
      Object.fromEntries(
        (await sql<{ id: string; message_id: string | null }>('select id, message_id from webhook_deliveries')).map((r) => [
          r.id,
          r.message_id,
        ]),
      );
    expect(await ids()).toEqual({ [original]: null, [replay]: original, [replayOfReplay]: original, [orphan]: null });

    await orm.migrator.down({ to: BEFORE });
    const columns = await sql(
      `select 1 from information_schema.columns where table_name = 'webhook_deliveries' and column_name = 'message_id'`,
    );
    expect(columns).toEqual([]);
    await orm.migrator.up();
    expect((await ids())[replayOfReplay]).toBe(original);
  });
});
