import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { findStar, openDb, openOrm, qb, sql, StarStatementError, statement } from '@leadwire/db';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/db.ts';

const root = join(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name.startsWith('.')) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every string and template literal of a file; a substitution reads as a plain word, so `${t}.*` still shows. */
function literals(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push(node.text);
    else if (ts.isTemplateExpression(node)) out.push([node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' x '));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('statements in the source', () => {
  // The executor refuses `*` when a statement first runs; this finds the ones no test happens to run.
  it('name their columns: none expands *', () => {
    const found = ['packages', 'apps'].flatMap((dir) =>
      sourceFiles(join(root, dir)).flatMap((file) =>
        literals(file).flatMap((text) => {
          const star = /\b(select|returning)\b/i.test(text) ? findStar(text) : null;
          return star === null ? [] : [`${relative(root, file)}: ${star}`];
        }),
      ),
    );
    expect(found).toEqual([]);
  });
});

describe('findStar', () => {
  it.each([
    'select * from contacts',
    'SELECT DISTINCT * FROM contacts',
    'select distinct on (a) * from t',
    'select c.*, 1 from contacts c',
    'select "c".* from contacts "c"',
    'select (x).* from (select row(1, 2) as x) s',
    'select id, * from contacts',
    'update contacts set stage = ? returning *',
    'with r as (update t set a = 1 returning *) select id from r',
    'select a.id from (select t.*\nfrom t) a',
  ])('finds the star in %s', (sql) => {
    expect(findStar(sql)).not.toBeNull();
  });

  it.each([
    'select count(*) from contacts',
    'select count(*)::int as n, a * b as product from t',
    "select id from notes where body = 'select * from x' -- or c.*",
    'select id /* returning * */ from t',
    'select 2*3 as six, t.id from t',
  ])('leaves %s alone', (sql) => {
    expect(findStar(sql)).toBeNull();
  });
});

describe('the executor', () => {
  it('refuses a statement that expands *, naming it, before PostgreSQL sees it; named columns run', async () => {
    const test = await createTestDatabase('statements');
    const orm = await openOrm(test.url, { pool: { min: 0, max: 1 } });
    try {
      const db = await openDb(orm);
      await db.raw('create table t (id int, name text)');
      await db.raw("insert into t values (1, 'a')");
      const text = (t: TemplateStringsArray) => sql<{ id: number }>(t).compile(qb);
      await expect(db.query(text`select * from t`)).rejects.toThrow(StarStatementError);
      await expect(db.query(text`select t.* from t`)).rejects.toThrow(/must name their columns; this one expands \* near "select t\.\*"/);
      await expect(db.transaction((tx) => tx.query(qb.updateTable('contacts').set({ stage: 'b' }).returningAll()))).rejects.toThrow(
        StarStatementError,
      );
      // A fixed statement is refused when built, at module load: the first test importing its module fails.
      expect(() => statement()(() => qb.selectFrom('contacts').selectAll())).toThrow(StarStatementError);
      // Refused again on every later call, and nothing was prepared or written.
      await expect(db.query(text`select * from t`)).rejects.toThrow(StarStatementError);
      expect((await db.raw('select name from pg_prepared_statements')).rows).toEqual([]);
      expect(await db.query(text`select id, name, count(*) over () as n from t`)).toEqual([{ id: 1, name: 'a', n: '1' }]);
    } finally {
      await orm.close(true);
      await test.drop();
    }
  });
});
