import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { productionSources } from './folders.ts';

/*
 * tRPC's `_def` and zod's `_zod` are those libraries' internals: an upgrade may change them without a word, and the REST
 * surface built on them broke silently when it did (issue 26). Production code uses the public APIs (trpc-to-openapi's
 * generated document, zod's `toJSONSchema`, tRPC's router API); tests may still read the internals to cross-check.
 * Nothing that runs in production reads a property of either name, however it is written.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INTERNALS = new Set(['_def', '_zod']);
const PRODUCTION = ['apps/server/src', 'apps/console/src', 'apps/cli', 'packages/core/src', 'packages/db/src', 'sdk/src', 'snippets'];

/** `file:line name` for every read of an internal property in `text`: `x._def`, `x?._zod`, `x['_def']`. */
function internalReads(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, name: string) =>
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${name}`);
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && INTERNALS.has(node.name.text)) at(node, node.name.text);
    if (
      ts.isElementAccessExpression(node) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      INTERNALS.has(node.argumentExpression.text)
    )
      at(node, node.argumentExpression.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("tRPC's and zod's internals", () => {
  it('are read nowhere in the production sources', () => {
    const files = PRODUCTION.flatMap(productionSources).filter((f) => !f.includes('/test/'));
    expect(files.length).toBeGreaterThan(300);
    expect(files.flatMap((f) => internalReads(f, readFileSync(path.join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('are found however they are read, and not in comments or strings', () => {
    const text = [
      'const a = router._def.procedures;',
      'const b = schema?._zod.def;',
      "const c = schema['_zod'];",
      '// router._def in a comment',
      "const d = 'x._def';",
      'const e = thing.definition;',
    ].join('\n');
    expect(internalReads('probe.ts', text)).toEqual(['probe.ts:1 _def', 'probe.ts:2 _zod', 'probe.ts:3 _zod']);
  });
});
