/**
 * Fuzzes both OpenAPI documents against a real server: for every operation, valid, boundary and hostile requests
 * generated from its own schemas, sent with real credentials so they get past authentication. Any 5xx fails, and so
 * does any error whose body is not `{ error: string, code: string }` with a code the document lists for that
 * operation (on /api/v1 also at the status it lists), and so does any success whose JSON body does not match the
 * response schema the document gives for that status. The seed is fixed; set FUZZ_SEED to explore, and a failure
 * prints the seed that reproduces it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { Generator, HOSTILE_STRINGS, rng, type Schema } from './generate.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const PER_OPERATION = Number(process.env.FUZZ_PER_OPERATION ?? 40);
/** Operations that would end the fuzzer's own session; they are covered by their own tests. */
const SKIP = new Set(['accounts-signOut', 'accounts-logOutAll']);

let t: TestApp;
let publicKey: string;
let session: string;
const ids: string[] = [];
beforeAll(async () => {
  t = await initTestApp();
  const org = await t.newOrg({ plan: 'max' });
  publicKey = org.publicKey;
  const [owner] = await t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
  const signIn = await fetch(`${t.origin}/api/accounts/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner!.email, password: 'correct horse battery staple' }),
  });
  session = ((await signIn.json()) as { token: string }).token;
  for (const email of ['fuzz-a@example.com', 'fuzz-b@example.com']) {
    ids.push((await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email, firstName: 'Fuzz' } })).body.id);
  }
  const pipelines = await t.sql<{ id: string }>('select id from pipelines where organization_id = ?', [org.orgId]);
  const stages = await t.sql<{ id: string }>('select id from pipeline_stages where organization_id = ?', [org.orgId]);
  ids.push(...pipelines.map((p) => p.id), ...stages.map((s) => s.id));
});
afterAll(async () => t?.close());

interface Operation {
  method: string;
  path: string;
  op: Schema;
}

interface Planned {
  method: string;
  url: string;
  body?: string;
  mode: string;
}

/** Percent-encodes any string, a lone surrogate included (as U+FFFD, which is all a URL can carry). */
const enc = (s: string) => encodeURIComponent(s.toWellFormed());
const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v) ?? 'undefined');

function plan(gen: Generator, r: ReturnType<typeof rng>, o: Operation): Planned {
  const roll = r.next();
  const mode = roll < 0.3 ? 'valid' : roll < 0.45 ? 'boundary' : 'hostile';
  const hostile = mode === 'hostile';
  const params = (o.op.parameters ?? []).map((p: Schema) => gen.resolve(p));
  let path = o.path;
  const query: string[] = [];
  for (const p of params) {
    if (p.in === 'path') {
      const v = hostile && r.chance(0.3) ? r.pick(['not-a-uuid', '%00', '%C3%A9', 'a'.repeat(300), enc(r.pick(HOSTILE_STRINGS))]) : enc(asText(gen.value(p.schema)));
      path = path.replace(`{${p.name}}`, v);
    } else if (p.in === 'query' && (p.required || r.chance(0.5))) {
      // Capped: a query string over 16 KB is refused by the HTTP layer before any schema sees it.
      const v = (hostile && r.chance(0.5) ? asText(gen.wrong()) : asText(gen.value(p.schema, mode === 'boundary'))).slice(0, 4000);
      query.push(`${p.name}=${enc(v)}`);
    }
  }
  const media = o.op.requestBody?.content?.['application/json'];
  let body: string | undefined;
  if (media) {
    const schema = gen.resolve(media.schema);
    const valid = gen.value(schema, mode === 'boundary') as Record<string, unknown>;
    const mutated = (hostile ? gen.mutate(valid, schema) : valid) as Record<string, unknown>;
    // Password hashing costs about 100 ms of CPU and 128 MB: these bodies always carry an invalid password, so the
    // fuzzer covers their validation and leaves the hashing to their own tests.
    if (isCostly(o) && mutated && typeof mutated === 'object' && !Array.isArray(mutated)) {
      for (const name of passwordFields(o)) mutated[name] = r.pick<unknown>(['\u0000secret', '\ud800'.repeat(9), 12_345_678, null, 'x'.repeat(300), ['pw']]);
    }
    body = JSON.stringify(mutated);
  }
  return { method: o.method.toUpperCase(), url: `${path}${query.length ? `?${query.join('&')}` : ''}`, mode, ...(body === undefined ? {} : { body }) };
}

const passwordFields = (o: Operation) => {
  const schema = o.op.requestBody?.content?.['application/json']?.schema ?? {};
  return Object.keys(schema.properties ?? {}).filter((n) => /password/i.test(n));
};
const isCostly = (o: Operation) => passwordFields(o).length > 0;

/** The codes an operation documents, with the status each is documented under (null: any listed status). */
function documentedCodes(op: Schema): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const [status, res] of Object.entries<Schema>(op.responses ?? {})) {
    for (const code of Object.keys(res.content?.['application/json']?.examples ?? {})) out.set(code, Number(status));
  }
  for (const code of op['x-error-codes'] ?? []) if (!out.has(code)) out.set(code, null);
  return out;
}

/**
 * Validators of each operation's documented success bodies, compiled from the document itself: its `$ref`s point into
 * its components, which are registered once under an id of their own.
 */
function responseValidators(doc: Schema): (op: Schema, status: number) => ValidateFunction | undefined {
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  const rebase = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc.json#/components/')) as Schema;
  ajv.addSchema({ $id: 'doc.json', components: rebase(doc.components ?? {}) });
  const cache = new Map<string, ValidateFunction | undefined>();
  return (op, status) => {
    const key = `${op.operationId} ${status}`;
    if (!cache.has(key)) {
      const schema = op.responses?.[String(status)]?.content?.['application/json']?.schema;
      cache.set(key, schema ? ajv.compile(rebase(schema)) : undefined);
    }
    return cache.get(key);
  };
}

async function fuzzSurface(docPath: string, base: string, auth: () => string) {
  const doc = (await (await fetch(`${t.origin}${docPath}`)).json()) as Schema;
  const validatorFor = responseValidators(doc);
  const r = rng(SEED);
  const gen = new Generator(doc.components?.schemas ?? {}, r, ids);
  const operations: Operation[] = Object.entries<Schema>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Schema>(item)
      .filter(([, op]) => !SKIP.has(op.operationId))
      .map(([method, op]) => ({ method, path, op })),
  );
  const planned = operations.flatMap((o) =>
    Array.from({ length: isCostly(o) ? Math.ceil(PER_OPERATION / 5) : PER_OPERATION }, () => ({ o, req: plan(gen, r, o) })),
  );
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < planned.length) {
      const { o, req } = planned[next++]!;
      const started = performance.now();
      const res = await fetch(`${t.origin}${base}${req.url}`, {
        method: req.method,
        headers: { authorization: `Bearer ${auth()}`, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(req.body === undefined ? {} : { body: req.body }),
      });
      const text = await res.text();
      if (process.env.FUZZ_SLOW && performance.now() - started > 500) console.log(Math.round(performance.now() - started), req.method, req.url, res.status, text.slice(0, 100));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const problem = check(res.status, text, o.op, validatorFor);
      if (problem) problems.push(`${problem}\n  ${req.method} ${base}${req.url} (${req.mode})${req.body ? `\n  body: ${req.body.slice(0, 300)}` : ''}\n  answer: ${res.status} ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { problems, statuses, sent: planned.length };
}

function check(status: number, text: string, op: Schema, validatorFor: ReturnType<typeof responseValidators>): string | undefined {
  if (status >= 500) return `a ${status}`;
  if (status < 400) {
    if (!op.responses?.[String(status)]) return `status ${status} is not documented for ${op.operationId}`;
    const validate = validatorFor(op, status);
    if (!validate) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return 'a success body that is not JSON';
    }
    return validate(body) ? undefined : `a ${status} body outside its schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`;
  }
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return 'an error body that is not JSON';
  }
  if (!body || typeof body !== 'object' || typeof body.error !== 'string' || typeof body.code !== 'string') return 'an error outside { error, code }';
  const documented = documentedCodes(op);
  if (!documented.has(body.code)) return `code ${body.code} is not documented for ${op.operationId}`;
  const at = documented.get(body.code);
  if (at !== null && at !== undefined && at !== status) return `code ${body.code} answered with ${status}, documented as ${at}`;
  return undefined;
}

describe(`fuzzing both OpenAPI documents (seed ${SEED})`, () => {
  it.each([
    ['/api/v1/docs/json', '/api/v1', () => publicKey],
    ['/api/docs/json', '/api', () => session],
  ] as const)('%s: no 5xx, every error in the shape with a documented code, every success as documented', async (docPath, base, auth) => {
    const { problems, statuses, sent } = await fuzzSurface(docPath, base, auth);
    expect(sent).toBeGreaterThan(200);
    // The requests must get past authentication, or the fuzzing proves little.
    expect(statuses.get(401) ?? 0, JSON.stringify(Object.fromEntries(statuses))).toBeLessThan(sent * 0.1);
    expect(problems.slice(0, 15), `seed ${SEED} (FUZZ_SEED=${SEED} reproduces it): ${problems.length} problems`).toEqual([]);
  }, 120_000);
});
