import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { InferKyselyDB } from '@mikro-orm/sql';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type CompiledQuery,
  type InferResult,
} from 'kysely';
import type { allEntities } from './entities/index.ts';

type InferredDB = InferKyselyDB<(typeof allEntities)[number]>;

/**
 * The database as the compiler sees it, inferred from the entities: table and column names in the database's own
 * snake_case, row types from the property builders. The entities (with the migrations they generate) are the only
 * description of a table; `test/db/schema-drift.test.ts` holds them to the migrated schema. An interface over the
 * inferred type rather than the type itself: the compiler compares two uses of an interface by identity, where the
 * inferred type (an intersection of mapped types over every entity) was compared member by member in every query.
 * Type-checking the tree: 17.7 million instantiations -> 4.8, a third less time (issue 26).
 */
// oxlint-disable-next-line typescript/no-empty-object-type -- the members are InferredDB's, named once
export interface DB extends InferredDB {}

/**
 * Builds statements, never runs them: it has no connection. Statements run through `Db`, on the bounded request pool
 * as named prepared statements, inside whatever transaction the service was given. (MikroORM's `em.getKysely()` would
 * run them on the ORM's own pool, outside those bounds and without prepared statements.)
 */
export const qb = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** A named parameter's stand-in while a statement is compiled; replaced by the caller's value when it runs. */
class Param {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/** A statement compiled once, run with named parameters: `P` the parameters, `R` a row. */
export interface Statement<P, R> {
  /** The prepared statement's name: the same text always gets the same name, on every connection. */
  readonly name: string;
  readonly text: string;
  /** Where each `$n` comes from: a parameter's name, or a constant the builder bound itself. */
  readonly slots: readonly ({ param: keyof P & string } | { value: unknown })[];
  /** Never set: carries the row type. */
  readonly row?: R;
}

/**
 * A select list or `returning` that expands `*` (`select *`, `c.*`, `(x).*`, `returning *`). String literals and
 * comments are blanked first, so a `*` inside them is not one, and neither is `count(*)` or `a * b`.
 */
const STAR = /\b(?:select(?:\s+distinct(?:\s+on\s*\([^)]*\))?|\s+all)?|returning)\s+\*|,\s*\*|[\w")\]]\s*\.\s*\*/i;

/** The part of `sql` that expands `*`, or null. Exported for tests and for tools that scan statements. */
export function findStar(sql: string): string | null {
  const bare = sql.replace(/'(?:[^']|'')*'|--[^\n]*|\/\*[\s\S]*?\*\//g, (m) => ' '.repeat(m.length));
  const m = STAR.exec(bare);
  return m
    ? sql
        .slice(Math.max(0, m.index - 20), m.index + m[0].length)
        .replace(/\s+/g, ' ')
        .trim()
    : null;
}

/**
 * Statements name their columns. A prepared statement that expands `*` keeps the column list it was planned with, so
 * once a migration adds a column every pooled connection that prepared it fails with "cached plan must not change
 * result type" until the process restarts: exactly a rolling deploy. Refused when a statement is built (see `prepared`), so the first test
 * that runs such a statement fails.
 */
export class StarStatementError extends Error {
  constructor(sql: string, found: string) {
    super(`Statements must name their columns; this one expands * near "${found}": ${sql.replace(/\s+/g, ' ').trim().slice(0, 200)}`);
    this.name = 'StarStatementError';
  }
}

/**
 * The text and name of a compiled query, as pg takes them for a named prepared statement. A statement that expands `*`
 * (`selectAll()`) is refused here: at module load for `statement()`, on the first call for a per-call query.
 */
export function prepared(text: string): { name: string; text: string } {
  const star = findStar(text);
  if (star !== null) throw new StarStatementError(text, star);
  return { name: `lw_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text };
}

/**
 * A statement built once at module load with named, typed parameters, so the hot path pays neither for building nor
 * for planning it:
 *
 *   const FIND = statement<{ orgId: string; email: string }>()((p) =>
 *     qb.selectFrom('contacts').select(['id', 'email']).where('organization_id', '=', p.orgId).where('email', '=', p.email));
 *   const rows = await db.run(FIND, { orgId, email }); // rows: { id: string; email: string | null }[]
 *
 * `p.x` stands for parameter `x` wherever a value goes (a comparison, `values`, `set`, a `sql` fragment). It is a single
 * value: lists travel as one array parameter compared with `= any(...)`, never spread into `in (...)`.
 */
export const statement =
  <P extends object = Record<never, never>>() =>
  <Q extends Compilable<unknown>>(build: (p: P) => Q): Statement<P, InferResult<Q>[number]> => {
    const params = new Proxy({}, { get: (_, key) => new Param(String(key)) }) as P;
    const compiled = build(params).compile();
    const slots = compiled.parameters.map((v) => (v instanceof Param ? { param: v.name as keyof P & string } : { value: v }));
    const built = { ...prepared(compiled.sql), slots };
    const known = registry.get(built.name) ?? { text: built.text, sites: new Set<string>() };
    known.sites.add(callerOf(new Error().stack));
    registry.set(built.name, known);
    return built;
  };

/**
 * Every distinct statement built so far, with the source lines that built it (two constants may build the same
 * text): statements are module constants, so this is bounded by the code, not by traffic. For the checks that must see them all, private ones included
 * (test/db/sharding-gap.test.ts lists those that span organizations).
 */
const registry = new Map<string, { text: string; sites: Set<string> }>();
export const builtStatements = (): readonly { name: string; text: string; sites: readonly string[] }[] =>
  [...registry].map(([name, s]) => ({ name, text: s.text, sites: [...s.sites] }));

/** `file:line` of the first stack frame outside this file. */
function callerOf(stack: string | undefined): string {
  const frames = (stack ?? '').split('\n').slice(1);
  const own = [import.meta.url, fileURLToPath(import.meta.url)];
  const frame = frames.find((f) => !own.some((o) => f.includes(`${o}:`))) ?? '';
  return /\(?((?:file:\/\/)?\/[^()]+:\d+):\d+\)?\s*$/.exec(frame)?.[1]?.replace(/^file:\/\//, '') ?? 'unknown';
}

/** The values of `stmt`'s `$n`, in order. */
export const bind = <P>(stmt: Statement<P, unknown>, params: P): unknown[] =>
  stmt.slots.map((s) => ('param' in s ? params[s.param] : s.value));

/** A query built per call (its shape depends on the input, e.g. optional filters): compiled each time it runs. */
export type Query<R> = Compilable<R> | CompiledQuery<R>;
