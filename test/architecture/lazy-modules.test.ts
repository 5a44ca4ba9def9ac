import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { productionSources } from './folders.ts';

/*
 * Packages loaded on a feature's first use rather than at every process's start (each importing file says why): a
 * static import anywhere in the server's production sources would load them at every start again, silently. Each is
 * imported with `import()` in the one file listed.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const LAZY: Record<string, string> = {
  // Its browser bundle inlined (4.4 MB) and an OpenAPI parser: 210 modules at every start, for the reference page.
  '@scalar/fastify-api-reference': 'apps/server/src/http/docs.ts',
  // SMTP: only a process that sends mail needs it.
  nodemailer: 'packages/core/src/mail/mailer.ts',
};

/** The packages a file imports statically for their values (type-only imports load nothing), and those it `import()`s. */
function importsOf(file: string): { static: string[]; dynamic: string[] } {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found = { static: [] as string[], dynamic: [] as string[] };
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      !(ts.isImportDeclaration(node) ? node.importClause?.isTypeOnly : node.isTypeOnly)
    ) {
      found.static.push(node.moduleSpecifier.text);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0]!)) {
      found.dynamic.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('packages loaded on first use', () => {
  const files = ['apps/server/src', 'packages/core/src', 'packages/db/src'].flatMap(productionSources);
  const imports = new Map(files.map((file) => [file, importsOf(file)]));

  it.each(Object.entries(LAZY))('imports %s nowhere statically, and with import() in %s', (pkg, file) => {
    const statically = [...imports].filter(([, i]) => i.static.includes(pkg)).map(([f]) => f);
    expect(statically).toEqual([]);
    expect(imports.get(file)?.dynamic).toContain(pkg);
  });
});
