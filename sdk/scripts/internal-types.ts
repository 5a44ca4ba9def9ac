/**
 * The router type of `@leadwire/sdk/internal`, generated into sdk/src/generated/internal-router.ts by
 * `npm run sdk:generate` and committed. The server's router type is zod-inferred and an installed package has neither
 * the server's sources nor zod, so the TypeScript checker is asked for every procedure's input and output as plain
 * structural types, written out as one `TRPCBuiltRouter` of `@trpc/server` (which `@trpc/client` needs anyway: it is
 * its peer dependency). The result names nothing of the server. The checker takes some 8 s over the server's types,
 * which is why the file is committed rather than made by every build (the SDK's build and its tests then need none of
 * the server); `sdk/test/internal-router.test-d.ts` fails the type check while it differs from the server's router.
 */
import { join } from 'node:path';
import ts from 'typescript';

const REPO = join(import.meta.dirname, '..', '..');
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
interface ProcedureType {
  path: string;
  kind: keyof typeof KINDS;
  input: string;
  output: string;
}

/** The checker's view of a probe of the router's types, in a program of the repository's settings. */
function load() {
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
  const probe = join(REPO, 'sdk', 'src', '__internal-router-probe.ts');
  const host = ts.createCompilerHost(parsed.options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (file, lang, ...rest) =>
    file === probe ? ts.createSourceFile(file, PROBE, lang) : getSourceFile(file, lang, ...rest);
  host.fileExists = (file) => file === probe || fileExists(file);
  const program = ts.createProgram([probe], parsed.options, host);
  // The probe only: the repository's type check covers the server, and checking it all here costs seconds.
  const file = program.getSourceFile(probe)!;
  const errors = [...program.getOptionsDiagnostics(), ...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, host));
  return { checker: program.getTypeChecker(), probe: file };
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
function proceduresOf(
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
function renderRouter(procedures: ProcedureType[], errorShape: string, summaries: Map<string, string>): string {
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
    `export type InternalRouter = TRPCBuiltRouter<\n  { ctx: object; meta: object; errorShape: InternalErrorShape; transformer: false },\n  {\n${body}  }\n>;\n`
  );
}

const HEADER = `/**
 * The router type of Leadwire's application surface (\`{base_url}/trpc\`) for \`@leadwire/sdk/internal\`: every procedure
 * with its input and output as plain types, generated from the server's router by the TypeScript checker. Do not edit:
 * run \`npm run sdk:generate\` after changing a procedure (sdk/test/internal-router.test-d.ts fails the type check
 * until then).
 */
`;

/** The generated module's text, exactly as it is written to sdk/src/generated/internal-router.ts. */
export function generateInternalRouter(summaries: Map<string, string>): { text: string; procedures: number } {
  const { checker, probe: file } = load();
  const probe: Probe = (name) => exported(checker, file, name);
  const client = probe('Client_');
  const transformer = checker.typeToString(prop(checker, client, 'transformer')!);
  if (transformer !== 'false') throw new Error(`the router uses a transformer (${transformer}): the generated router type must declare it`);
  const members = new Set(checker.getPropertiesOfType(probe('RouterMembers_')).map((s) => s.name));
  const procedures = proceduresOf(checker, probe, probe('Router_'), probe('Io_'), members);
  const errorShape = checker.typeToString(prop(checker, client, 'errorShape')!, undefined, PRINT);
  return { text: HEADER + renderRouter(procedures, errorShape, summaries), procedures: procedures.length };
}

/**
 * Each procedure's OpenAPI summary, for the generated router's JSDoc: the server's route table, which reads the
 * OpenAPI meta through trpc-to-openapi's own walk.
 */
export async function procedureSummaries(): Promise<Map<string, string>> {
  const { internalRouter, restRoutes } = await import('@leadwire/core');
  return new Map(restRoutes(internalRouter).flatMap((r) => (r.summary ? [[r.procedure, r.summary] as const] : [])));
}
