import { globSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { builtStatements, openDb, openOrm, type Db, type MikroORM } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The gap to distributing by organization (docs/scaling.md, "Distribution by organization"), kept honest: the tables
 * whose primary or unique keys lack `organization_id` and the statements that do not pin one organization are
 * computed here, from the migrated schema and from every statement the code builds, and must equal the lists the doc
 * gives. A new table, key or statement that spans organizations fails until the doc says what it means for sharding.
 */
const root = join(import.meta.dirname, '../..');
const doc = () => readFileSync(join(root, 'docs/scaling.md'), 'utf8');

/** The lines between `<!-- gap:<name> -->` and `<!-- /gap:<name> -->`. */
export function block(text: string, name: string): string[] {
  const [, inside] = text.split(`<!-- gap:${name} -->`);
  if (inside === undefined || !inside.includes(`<!-- /gap:${name} -->`)) throw new Error(`docs/scaling.md has no gap:${name} block`);
  return inside.split(`<!-- /gap:${name} -->`)[0]!.split('\n');
}

/** `| \`table\` | \`key\`, \`key\` or none | ... |` rows: table to its keys without organization_id. */
export function documentedTables(text: string): Record<string, string[]> {
  const rows = block(text, 'tables').filter((l) => /^\| `/.test(l));
  return Object.fromEntries(
    rows.map((l) => {
      const [, table, keys] = l.split('|').map((c) => c.trim());
      return [table!.replaceAll('`', ''), [...keys!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort()];
    }),
  );
}

/** `- \`file\`: \`NAME\`, \`NAME\` — why` bullets: the labels `file NAME`. */
export function documentedStatements(text: string): string[] {
  return block(text, 'statements')
    .filter((l) => l.startsWith('- `'))
    .flatMap((l) => {
      const [file, ...names] = [...l.split(' — ')[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      return names.map((n) => `${file} ${n}`);
    })
    .sort();
}

/** The constant (or property) a statement is assigned to: the nearest declaration at or above the line that built it. */
function labelOf(site: string): string {
  const m = /^(.*):(\d+)$/.exec(site);
  if (!m) return site;
  const lines = readFileSync(m[1]!, 'utf8').split('\n');
  for (let i = Number(m[2]) - 1; i >= 0; i--) {
    const d = /(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=|^\s*([A-Za-z_$][\w$]*)\s*:\s*statement\b/.exec(lines[i]!);
    if (d) return `${relative(join(root, 'packages/core/src'), m[1]!).replace(/^\.\.\/\.\.\//, '')} ${d[1] ?? d[2]}`;
  }
  return site;
}

/** Tables a statement reads or writes (its CTEs' names are not tables). */
function tablesOf(text: string): string[] {
  const ctes = new Set([...text.matchAll(/"(\w+)" as (?:materialized )?\(/g)].map((m) => m[1]!));
  return [...new Set([...text.matchAll(/\b(?:from|join|into|update|using)\s+"(\w+)"/gi)].map((m) => m[1]!))].filter((t) => !ctes.has(t));
}

/**
 * Pins one organization: compares `organization_id` (or the organizations row's own id) with a parameter, or inserts
 * rows whose `organization_id` is a parameter. Citus routes such a statement to one shard; any other touching a
 * distributed table runs on every shard.
 */
function pinsOneOrganization(text: string): boolean {
  if (/"organization_id"\s*=\s*\(?\$\d/.test(text)) return true;
  if (/\binsert into "\w+" \([^)]*"organization_id"[^)]*\) values \(/.test(text)) return true;
  if (/\bfrom "organizations" where "id" = \$\d/.test(text)) return true;
  const alias = /"organizations" as "(\w+)"/.exec(text)?.[1];
  return alias !== undefined && new RegExp(`"${alias}"\\."id" = \\$\\d`).test(text);
}

/** Every module that can build a statement, so that module-private ones are built (and registered) too. */
async function loadAllStatements() {
  const files = globSync('{packages/core/src,apps/server/src}/**/*.ts', { cwd: root }).filter(
    (f) => !/\.test(-d)?\.ts$/.test(f) && !/apps\/server\/src\/(main|migrate|admin)\.ts$/.test(f),
  );
  for (const f of files) await import(join(root, f));
  return builtStatements();
}

describe('the gap to distributing by organization', () => {
  let test: TestDatabase;
  let orm: MikroORM;
  let db: Db;
  let orgless: Set<string>;
  beforeAll(async () => {
    test = await createTestDatabase('sharding_gap', { migrated: true });
    orm = await openOrm(test.url, { pool: { min: 0, max: 1 } });
    db = await openDb(orm);
    const { rows } = await db.raw(
      `select c.relname as table from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'p')
         and not exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped)`,
    );
    orgless = new Set((rows as { table: string }[]).map((r) => r.table));
  });
  afterAll(async () => {
    await orm?.close(true);
    await test?.drop();
  });

  it('lists every table with the primary and unique keys that lack organization_id', async () => {
    const { rows } = await db.raw(
      `select c.relname as table, coalesce(array_agg(i.relname::text order by i.relname) filter (where i.relname is not null), '{}'::text[]) as keys
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       left join pg_index x on x.indrelid = c.oid and x.indisunique
         and not exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and a.attnum = any(x.indkey))
       left join pg_class i on i.oid = x.indexrelid
       where n.nspname = 'public' and c.relkind in ('r', 'p')
       group by c.relname`,
    );
    const actual = Object.fromEntries((rows as { table: string; keys: string[] }[]).map((r) => [r.table, [...r.keys].sort()]));
    expect(documentedTables(doc())).toEqual(actual);
  });

  it('lists every statement that does not pin one organization', async () => {
    const statements = await loadAllStatements();
    expect(statements.length).toBeGreaterThan(250);
    const crossing = statements.filter((s) => {
      const tables = tablesOf(s.text);
      return tables.some((t) => !orgless.has(t)) && !pinsOneOrganization(s.text);
    });
    // Statements that test files built (this worker may have run other files first) are not the code's.
    const ours = (site: string) => ['packages/', 'apps/'].some((d) => site.startsWith(join(root, d)));
    const labels = [...new Set(crossing.flatMap((s) => s.sites.filter(ours).map(labelOf)))].sort();
    expect(labels.filter((l) => !l.includes(' '))).toEqual([]);
    expect(documentedStatements(doc())).toEqual(labels);
  });

  it('would be caught: an undocumented key or statement differs from the lists', () => {
    const text = [
      '<!-- gap:tables -->',
      '| `t` | `t_pkey`, `t_token_unique` | distributed |',
      '| `u` | none | reference |',
      '<!-- /gap:tables -->',
      '<!-- gap:statements -->',
      '- `jobs/x.ts`: `A`, `B` — a sweep of `every` organization',
      '<!-- /gap:statements -->',
    ].join('\n');
    expect(documentedTables(text)).toEqual({ t: ['t_pkey', 't_token_unique'], u: [] });
    expect(documentedStatements(text)).toEqual(['jobs/x.ts A', 'jobs/x.ts B']);
    expect(pinsOneOrganization('select "id" from "contacts" where "id" = $1')).toBe(false);
    expect(tablesOf('with "doomed" as (select "id" from "sessions") delete from "sessions" as "t" using "doomed" as "d"')).toEqual([
      'sessions',
    ]);
    expect(pinsOneOrganization('select "id" from "contacts" where "c"."organization_id" = $2 and "id" = $1')).toBe(true);
    expect(pinsOneOrganization('insert into "notes" ("id", "organization_id") values ($1, $2)')).toBe(true);
    expect(
      pinsOneOrganization(
        'select 1 from "users" as "u" inner join "organizations" as "o" on "o"."id" = "u"."organization_id" where "o"."id" = $2',
      ),
    ).toBe(true);
    expect(
      pinsOneOrganization(
        'select 1 from "users" as "u" inner join "organizations" as "o" on "o"."id" = "u"."organization_id" where "u"."id" = $1',
      ),
    ).toBe(false);
  });
});
