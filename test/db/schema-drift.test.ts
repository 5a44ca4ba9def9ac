import { ReferenceKind } from '@mikro-orm/core';
import { allEntities, type MikroORM, openOrm } from '@leadwire/db';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * Every table as the entities describe it (the compiler's view: statements are typed from them) against the database
 * the committed migrations build: table names, column names, type families, nullability and defaults, both ways. A
 * column renamed, dropped or added on one side only, or a nullability or default that differs, is listed here, so the
 * types the statements are checked against cannot drift from the schema they run on.
 */

interface Column {
  family: string;
  nullable: boolean;
  default: string | null;
}
type Tables = Map<string, Map<string, Column>>;

/** Tables the entities do not describe, on purpose: the migrations' own bookkeeping (pg-boss keeps its own schema). */
const NOT_ENTITIES = new Set(['mikro_orm_migrations']);

/** A type's family: what a statement's row type depends on, not its spelling (`int4` and `integer` are one family). */
export function family(type: string): string {
  const t = type.toLowerCase().trim();
  if (t.endsWith('[]')) return `${family(t.slice(0, -2))}[]`;
  if (t.startsWith('_')) return `${family(t.slice(1))}[]`;
  const base = t.replace(/\(.*\)$/, '').trim();
  const families: Record<string, string> = {
    text: 'text',
    varchar: 'text',
    'character varying': 'text',
    char: 'text',
    character: 'text',
    bpchar: 'text',
    int: 'integer',
    int4: 'integer',
    integer: 'integer',
    int2: 'integer',
    smallint: 'integer',
    int8: 'bigint',
    bigint: 'bigint',
    // A serial is a bigint whose default is its own sequence (the default is compared on its own).
    bigserial: 'bigint',
    numeric: 'numeric',
    decimal: 'numeric',
    real: 'float',
    float4: 'float',
    float8: 'float',
    double: 'float',
    'double precision': 'float',
    bool: 'boolean',
    boolean: 'boolean',
    timestamptz: 'timestamptz',
    'timestamp with time zone': 'timestamptz',
    timestamp: 'timestamp',
    'timestamp without time zone': 'timestamp',
    date: 'date',
    uuid: 'uuid',
    json: 'json',
    jsonb: 'jsonb',
    bytea: 'bytea',
    inet: 'inet',
  };
  return families[base] ?? base;
}

/** A default as written, without the casts PostgreSQL adds when it stores one (`'x'::text`, `'{}'::text[]`). */
export function normalDefault(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value
    .replace(/::[a-z_ ]+(\[\])?/gi, '')
    .replace(/^\((.*)\)$/, '$1')
    .trim()
    .toLowerCase();
}

/** The tables and columns the entities declare, from MikroORM's metadata (what it would create them as). */
function declared(orm: MikroORM): Tables {
  const tables: Tables = new Map();
  const names = new Set(allEntities.map((e) => e.meta.className));
  for (const meta of orm.getMetadata()) {
    if (!names.has(meta.className) || meta.virtual || meta.embeddable) continue;
    const columns = new Map<string, Column>();
    for (const prop of meta.props) {
      if (prop.persist === false || !prop.fieldNames?.length) continue;
      // Collections and the inverse side of a one-to-one live in other tables.
      if (
        prop.kind === ReferenceKind.ONE_TO_MANY ||
        prop.kind === ReferenceKind.MANY_TO_MANY ||
        (prop.kind === ReferenceKind.ONE_TO_ONE && !prop.owner)
      )
        continue;
      prop.fieldNames.forEach((name, i) => {
        // An autoincrement column that is no primary key defaults to the sequence named as PostgreSQL names a serial's.
        const serial = prop.autoincrement && !prop.primary ? `nextval('${meta.tableName}_${name}_seq')` : null;
        const raw = prop.defaultRaw ?? serial ?? (prop.default === undefined ? null : String(prop.default));
        columns.set(name, {
          family: family(prop.columnTypes[i] ?? prop.type),
          nullable: !prop.primary && Boolean(prop.nullable),
          default: normalDefault(raw),
        });
      });
    }
    tables.set(meta.tableName, columns);
  }
  return tables;
}

/** The tables and columns of the database's own schema, from information_schema. */
async function present(client: pg.ClientBase): Promise<Tables> {
  const { rows } = await client.query<{
    table_name: string;
    column_name: string;
    udt_name: string;
    is_nullable: string;
    column_default: string | null;
  }>(
    `select c.table_name, c.column_name, c.udt_name, c.is_nullable, c.column_default
     from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
     where c.table_schema = current_schema()
     order by c.table_name, c.ordinal_position`,
  );
  const tables: Tables = new Map();
  for (const r of rows) {
    if (NOT_ENTITIES.has(r.table_name)) continue;
    let columns = tables.get(r.table_name);
    if (!columns) tables.set(r.table_name, (columns = new Map()));
    columns.set(r.column_name, { family: family(r.udt_name), nullable: r.is_nullable === 'YES', default: normalDefault(r.column_default) });
  }
  return tables;
}

/** Every way the two descriptions differ, one line each; empty when they agree. */
export function differences(entities: Tables, database: Tables): string[] {
  const out: string[] = [];
  for (const [table, columns] of entities) {
    const actual = database.get(table);
    if (!actual) {
      out.push(`${table}: an entity's table the database lacks`);
      continue;
    }
    for (const [name, want] of columns) {
      const got = actual.get(name);
      if (!got) out.push(`${table}.${name}: declared by the entity, missing in the database`);
      else {
        if (got.family !== want.family) out.push(`${table}.${name}: type ${want.family} in the entity, ${got.family} in the database`);
        if (got.nullable !== want.nullable)
          out.push(
            `${table}.${name}: ${want.nullable ? 'nullable' : 'not null'} in the entity, ${got.nullable ? 'nullable' : 'not null'} in the database`,
          );
        if (got.default !== want.default)
          out.push(`${table}.${name}: default ${want.default} in the entity, ${got.default} in the database`);
      }
    }
    for (const name of actual.keys()) if (!columns.has(name)) out.push(`${table}.${name}: in the database, declared by no entity`);
  }
  for (const table of database.keys()) if (!entities.has(table)) out.push(`${table}: a table no entity declares`);
  return out;
}

describe('the entities and the migrated schema', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let client: pg.Client;
  beforeAll(async () => {
    // A clone of the run's template, which global-setup.ts migrated with the committed migrations.
    db = await createTestDatabase('schema_drift', { migrated: true });
    orm = await openOrm(db.url, { pool: { min: 0, max: 1 } });
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await orm?.close(true);
    await db?.drop();
  });

  it('describe every table alike: names, columns, type families, nullability and defaults', async () => {
    const entities = declared(orm);
    expect(entities.size).toBe(allEntities.length);
    expect(differences(entities, await present(client))).toEqual([]);
  });

  it('would be caught: a renamed, a dropped and an added column, a changed nullability, type and default, an extra table', async () => {
    await client.query('begin');
    try {
      await client.query('alter table webhook_endpoints rename column disabled_reason to disabled_why');
      await client.query('alter table users drop column name');
      await client.query('alter table sessions add column nickname text');
      await client.query('alter table invites alter column email drop not null');
      await client.query('alter table webhook_deliveries alter column attempts type bigint');
      await client.query('alter table webhook_endpoints alter column failure_count set default 1');
      await client.query('create table stray (id int)');
      expect(differences(declared(orm), await present(client)).sort()).toEqual(
        [
          'webhook_endpoints.disabled_reason: declared by the entity, missing in the database',
          'webhook_endpoints.disabled_why: in the database, declared by no entity',
          'users.name: declared by the entity, missing in the database',
          'sessions.nickname: in the database, declared by no entity',
          'invites.email: not null in the entity, nullable in the database',
          'webhook_deliveries.attempts: type integer in the entity, bigint in the database',
          'webhook_endpoints.failure_count: default 0 in the entity, 1 in the database',
          'stray: a table no entity declares',
        ].sort(),
      );
    } finally {
      await client.query('rollback');
    }
    expect(differences(declared(orm), await present(client))).toEqual([]);
  });

  it('would be caught from the entity side: a property renamed, made nullable or added without a migration', async () => {
    const entities = declared(orm);
    const contacts = entities.get('contacts')!;
    contacts.set('emial', contacts.get('email')!);
    contacts.delete('email');
    contacts.set('stage', { ...contacts.get('stage')!, nullable: true });
    entities.get('users')!.set('nickname', { family: 'text', nullable: true, default: null });
    expect(differences(entities, await present(client)).sort()).toEqual(
      [
        'contacts.emial: declared by the entity, missing in the database',
        'contacts.email: in the database, declared by no entity',
        'contacts.stage: nullable in the entity, not null in the database',
        'users.nickname: declared by the entity, missing in the database',
      ].sort(),
    );
  });
});
