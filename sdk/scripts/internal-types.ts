/**
 * The declarations of `@leadwire/sdk/internal` for an installed package. In the repository `sdk/src/internal.ts` takes
 * the application router's type from `@leadwire/core` (zod-inferred, so never copied by hand and never stale); an
 * installed package has neither the server's sources nor zod. So the build asks the TypeScript checker for every
 * procedure's input and output as plain structural types and writes them out as one `TRPCBuiltRouter` of
 * `@trpc/server`, which `@trpc/client` needs anyway (it is its peer dependency). The result names nothing of the server.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const REPO = join(import.meta.dirname, '..', '..');
const CORE_IMPORT = /^import type \{ InternalRouter \} from '@leadwire\/core';\n/m;
const PRINT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseStructuralFallback;
const KINDS = { query: 'TRPCQueryProcedure', mutation: 'TRPCMutationProcedure', subscription: 'TRPCSubscriptionProcedure' } as const;

// The router's types through tRPC's public API only: a built router carries its procedures and sub-routers as properties
// beside the members of its public `Router` interface; each procedure's input and output as `inferProcedureInput` and
// `inferProcedureOutput` give them; the transformer and error shape as `inferTRPCClientTypes` gives them.
const PROBE = `import type { InternalRouter } from '@leadwire/core';
import type { AnyTRPCMutationProcedure, AnyTRPCProcedure, AnyTRPCQueryProcedure, AnyTRPCRouter, AnyTRPCSubscriptionProcedure, inferProcedureInput, inferProcedureOutput, inferTRPCClientTypes } from '@trpc/server';
type Io<R> = { [K in keyof R]: R[K] extends AnyTRPCProcedure ? { input: inferProcedureInput<R[K]>; output: inferProcedureOutput<R[K]> } : Io<R[K]> };
export type Router_ = InternalRouter;
export type RouterMembers_ = AnyTRPCRouter;
export type Io_ = Io<Omit<InternalRouter, keyof AnyTRPCRouter>>;
export type Client_ = inferTRPCClientTypes<InternalRouter>;
export type Procedure_ = AnyTRPCProcedure;
export type query = AnyTRPCQueryProcedure;
export type mutation = AnyTRPCMutationProcedure;
export type subscription = AnyTRPCSubscriptionProcedure;
`;

/** One procedure as the build found it: its dotted path, kind, and input and output printed as types. */
export interface ProcedureType {
  path: string;
  kind: keyof typeof KINDS;
  input: string;
  output: string;
}

/** The checker's view of one program holding `entry` and a probe of the router's types. */
function load(entry: string) {
  const configPath = join(REPO, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: false, declaration: true, emitDeclarationOnly: true };
  const probe = join(dirname(entry), '__internal-router-probe.ts');
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (file, lang, ...rest) =>
    file === probe ? ts.createSourceFile(file, PROBE, lang) : getSourceFile(file, lang, ...rest);
  host.fileExists = (file) => file === probe || fileExists(file);
  const program = ts.createProgram([entry, probe], options, host);
  // Only the two files at hand: the repository's typecheck covers the server, and checking it all here costs seconds.
  const files = [program.getSourceFile(entry), program.getSourceFile(probe)];
  const errors = [
    ...program.getOptionsDiagnostics(),
    ...files.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, host));
  return { program, checker: program.getTypeChecker(), probe: program.getSourceFile(probe)! };
}

function exported(checker: ts.TypeChecker, file: ts.SourceFile, name: string): ts.Type {
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(file)!).find((s) => s.name === name);
  if (!symbol) throw new Error(`probe lost ${name}`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}

const prop = (checker: ts.TypeChecker, type: ts.Type, name: string): ts.Type | undefined => {
  const symbol = type.getProperty(name);
  return symbol && checker.getTypeOfSymbol(symbol);
};

/** The probe's types, by the names it exports them under. */
type Probe = (name: string) => ts.Type;

/**
 * Every procedure of `node` (a router's procedures and sub-routers as properties, less `skip`), depth first in
 * declaration order: a property is a procedure when its type is assignable to tRPC's `AnyTRPCProcedure`, of the kind
 * whose `AnyTRPC…Procedure` it is assignable to; `io` is the same tree with each procedure's input and output.
 */
export function proceduresOf(
  checker: ts.TypeChecker,
  probe: Probe,
  node: ts.Type,
  io: ts.Type,
  skip: ReadonlySet<string> = new Set(),
  prefix = '',
): ProcedureType[] {
  return checker.getPropertiesOfType(node).flatMap((symbol): ProcedureType[] => {
    if (skip.has(symbol.name)) return [];
    const type = checker.getTypeOfSymbol(symbol);
    const path = `${prefix}${symbol.name}`;
    const types = prop(checker, io, symbol.name);
    if (!types) throw new Error(`no input and output types for ${path}`);
    if (!checker.isTypeAssignableTo(type, probe('Procedure_'))) return proceduresOf(checker, probe, type, types, new Set(), `${path}.`);
    const kind = (Object.keys(KINDS) as ProcedureType['kind'][]).find((k) => checker.isTypeAssignableTo(type, probe(k)));
    if (!kind) throw new Error(`${path} is a procedure of none of the kinds ${Object.keys(KINDS).join(', ')}`);
    const print = (name: string) => checker.typeToString(prop(checker, types, name)!, undefined, PRINT);
    return [{ path, kind, input: print('input'), output: print('output') }];
  });
}

/** A key as TypeScript accepts it in a type literal. */
const key = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

/** The router type as a declaration: shapes used more than once become aliases, so the file stays readable. */
export function renderRouter(procedures: ProcedureType[], errorShape: string, summaries: Map<string, string>): string {
  const counts = new Map<string, number>();
  for (const p of procedures) for (const t of [p.input, p.output]) counts.set(t, (counts.get(t) ?? 0) + 1);
  const aliases = new Map<string, string>();
  const aliasOf = (t: string) => {
    if ((counts.get(t) ?? 0) < 2 || t.length < 80) return t;
    if (!aliases.has(t)) aliases.set(t, `Shape${aliases.size + 1}`);
    return aliases.get(t)!;
  };
  type Tree = { [name: string]: Tree | ProcedureType };
  const tree: Tree = {};
  for (const p of procedures) {
    const parts = p.path.split('.');
    let node = tree;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Tree;
    node[parts.at(-1)!] = p;
  }
  const render = (node: Tree, indent: string): string =>
    Object.entries(node)
      .map(([name, value]) => {
        if (!('kind' in value) || typeof value.kind !== 'string')
          return `${indent}${key(name)}: {\n${render(value as Tree, `${indent}  `)}${indent}};\n`;
        const p = value as ProcedureType;
        const doc = summaries.get(p.path);
        const comment = doc ? `${indent}/** ${doc.replace(/\*\//g, '*\\/')} */\n` : '';
        return `${comment}${indent}${key(name)}: ${KINDS[p.kind]}<{ input: ${aliasOf(p.input)}; output: ${aliasOf(p.output)}; meta: object }>;\n`;
      })
      .join('');
  const body = render(tree, '    ');
  const shapes = [...aliases].map(([type, name]) => `type ${name} = ${type};\n`).join('');
  const used = [...new Set(procedures.map((p) => KINDS[p.kind]))].sort();
  return (
    `import type { TRPCBuiltRouter, ${used.join(', ')} } from '@trpc/server';\n` +
    shapes +
    `/** The error shape of the application surface: \`data.code\`, \`data.httpStatus\` and \`data.body\` (\`{ error, code }\`). */\n` +
    `type InternalErrorShape = ${errorShape};\n` +
    `/** Every procedure of Leadwire's application surface, with its input and output (generated from the server's router). */\n` +
    `type InternalRouter = TRPCBuiltRouter<\n  { ctx: object; meta: object; errorShape: InternalErrorShape; transformer: false },\n  {\n${body}  }\n>;\n`
  );
}

/**
 * The bundled `internal.d.ts`: TypeScript's declaration emit of `entry` (one module whose only local import is the
 * router's type), with that import swapped for the router's structural type. `summaries` adds each procedure's summary
 * from the server's OpenAPI metadata as its JSDoc; it is awaited only after the checker's work, so the caller may
 * gather it meanwhile.
 */
export async function internalDeclarations(
  entry: string,
  summaries: Map<string, string> | Promise<Map<string, string>> = new Map(),
): Promise<{ dts: string; procedures: number }> {
  const { program, checker, probe: file } = load(entry);
  const probe: Probe = (name) => exported(checker, file, name);
  const client = probe('Client_');
  const transformer = checker.typeToString(prop(checker, client, 'transformer')!);
  if (transformer !== 'false') throw new Error(`the router uses a transformer (${transformer}): the generated router type must declare it`);
  const members = new Set(checker.getPropertiesOfType(probe('RouterMembers_')).map((s) => s.name));
  const procedures = proceduresOf(checker, probe, probe('Router_'), probe('Io_'), members);
  const errorShape = checker.typeToString(prop(checker, client, 'errorShape')!, undefined, PRINT);
  let emitted = '';
  const result = program.emit(program.getSourceFile(entry), (_file, text) => (emitted = text), undefined, true);
  if (result.emitSkipped || emitted === '') throw new Error(`no declarations emitted for ${entry}`);
  if (!CORE_IMPORT.test(emitted))
    throw new Error(`${entry} must import the router as \`import type { InternalRouter } from '@leadwire/core'\``);
  const dts = emitted.replace(CORE_IMPORT, renderRouter(procedures, errorShape, await summaries));
  return { dts, procedures: procedures.length };
}

/**
 * Each procedure's OpenAPI summary, for the generated router's JSDoc (build.ts reads them and passes them on stdin):
 * the server's route table, which reads the OpenAPI meta through trpc-to-openapi's own walk.
 */
export async function procedureSummaries(): Promise<Map<string, string>> {
  const { internalRouter, restRoutes } = await import('@leadwire/core');
  return new Map(restRoutes(internalRouter).flatMap((r) => (r.summary ? [[r.procedure, r.summary] as const] : [])));
}

/** All of stdin as text. */
async function stdinText(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin.setEncoding('utf8')) text += chunk as string;
  return text;
}

// Run as `node internal-types.ts <entry> <out.d.ts>` with the summaries as JSON entries on stdin: build.ts starts it
// beside its other declaration work, as each takes seconds of one core.
if (import.meta.main) {
  const [entry, out] = process.argv.slice(2);
  if (!entry || !out) throw new Error('usage: node internal-types.ts <entry.ts> <out.d.ts> < summaries.json');
  const summaries = stdinText().then((text) => new Map(JSON.parse(text) as [string, string][]));
  await writeFile(out, (await internalDeclarations(entry, summaries)).dts);
}
