/**
 * Fuzzes both OpenAPI documents against a real server: for every operation, valid, boundary and hostile requests
 * generated from its own schemas, sent with real credentials so they get past authentication. Any 5xx fails, and so
 * does any error whose body is not `{ error: string, code: string }` with a code the document lists for that
 * operation (on /api/v1 also at the status it lists), and so does any success whose JSON body does not match the
 * response schema the document gives for that status. The seed is fixed; set FUZZ_SEED to explore, and a failure
 * prints the seed that reproduces it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { check, responseValidators } from './check.ts';
import { Generator, HOSTILE_STRINGS, rng, type Schema } from './generate.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
/** Requests per operation: /v1 has 6 operations, the internal surface about 110, so it gets fewer each to stay fast. */
const PER_OPERATION = (surface: string) => Number(process.env.FUZZ_PER_OPERATION ?? (surface === '/api/v1' ? 40 : 10));
/** Operations that would end the fuzzer's own session; they are covered by their own tests. */
const SKIP = new Set(['accounts-signOut', 'accounts-logOutAll']);

let t: TestApp;
let publicKey: string;
let internalKey: string;
let session: string;
const ids: string[] = [];
beforeAll(async () => {
  t = await initTestApp();
  const org = await t.newOrg({ plan: 'max' });
  publicKey = org.publicKey;
  internalKey = org.internalKey;
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
beforeAll(() => {
  otherSurface = (base) => (base === '/api/v1' ? internalKey : publicKey);
});

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
  /** Headers that replace the defaults (`authorization` included: '' sends none). */
  headers?: Record<string, string>;
}

/** A credential of the other surface, for the `wrong-surface` attack. */
let otherSurface: (base: string) => string = () => '';

/**
 * Attacks on the transport rather than the schema, one per request in a share of the plan: each must be answered with
 * a status, code and headers the operation documents.
 */
function attack(r: ReturnType<typeof rng>, planned: Planned, o: Operation, base: string): Planned {
  const uuid = '7d1e0c54-2b9f-4d7a-8c3e-1f2a3b4c5d6e';
  const picked = r.pick([
    'bad-json',
    'not-json',
    'percent-ff',
    'no-auth',
    'wrong-surface',
    'garbage-auth',
    'oversized',
    'unknown-id',
    'plus',
  ]);
  // fetch sends no body with a GET: the body attacks become a query-string one there.
  const kind = planned.method === 'GET' && ['bad-json', 'not-json', 'oversized'].includes(picked) ? 'percent-ff' : picked;
  const sep = planned.url.includes('?') ? '&' : '?';
  switch (kind) {
    case 'bad-json':
      return { ...planned, mode: kind, body: '{"a":', headers: { 'content-type': 'application/json' } };
    case 'not-json':
      return { ...planned, mode: kind, body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    case 'percent-ff':
      return { ...planned, mode: kind, url: `${planned.url}${sep}${firstQuery(o) ?? 'q'}=%FF` };
    case 'plus':
      return { ...planned, mode: kind, url: `${planned.url}${sep}${firstQuery(o) ?? 'q'}=ada+1@example.com` };
    case 'no-auth':
      return { ...planned, mode: kind, headers: { authorization: '' } };
    case 'wrong-surface':
      return { ...planned, mode: kind, headers: { authorization: `Bearer ${otherSurface(base)}` } };
    case 'garbage-auth':
      return {
        ...planned,
        mode: kind,
        headers: { authorization: r.pick(['Bearer ck_live_%FF', 'Basic Zm9vOmJhcg==', 'Bearer lws_nope', 'Bearer']) },
      };
    case 'oversized':
      return {
        ...planned,
        mode: kind,
        body: JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 10) }),
        headers: { 'content-type': 'application/json' },
      };
    default:
      return { ...planned, mode: kind, url: planned.url.replace(/\/[0-9a-f-]{36}(?=\/|\?|$)/, `/${uuid}`) };
  }
}

/** Attacks meant to be refused as unauthenticated: left out of the share of 401s the test bounds. */
const AUTH_ATTACKS = new Set(['no-auth', 'wrong-surface', 'garbage-auth']);

const firstQuery = (o: Operation): string | undefined => (o.op.parameters ?? []).find((p: Schema) => p.in === 'query')?.name;

/** Percent-encodes any string, a lone surrogate included (as U+FFFD, which is all a URL can carry). */
const enc = (s: string) => encodeURIComponent(s.toWellFormed());
const asText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'));

function plan(gen: Generator, r: ReturnType<typeof rng>, o: Operation): Planned {
  const roll = r.next();
  const mode = roll < 0.3 ? 'valid' : roll < 0.45 ? 'boundary' : 'hostile';
  const hostile = mode === 'hostile';
  const params = (o.op.parameters ?? []).map((p: Schema) => gen.resolve(p));
  let path = o.path;
  const query: string[] = [];
  for (const p of params) {
    if (p.in === 'path') {
      const v =
        hostile && r.chance(0.3)
          ? r.pick(['not-a-uuid', '%00', '%C3%A9', 'a'.repeat(300), enc(r.pick(HOSTILE_STRINGS))])
          : enc(asText(gen.value(p.schema)));
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
      for (const name of passwordFields(o))
        mutated[name] = r.pick<unknown>(['\u0000secret', '\ud800'.repeat(9), 12_345_678, null, 'x'.repeat(300), ['pw']]);
    }
    body = JSON.stringify(mutated);
  }
  return {
    method: o.method.toUpperCase(),
    url: `${path}${query.length ? `?${query.join('&')}` : ''}`,
    mode,
    ...(body === undefined ? {} : { body }),
  };
}

const passwordFields = (o: Operation) => {
  const schema = o.op.requestBody?.content?.['application/json']?.schema ?? {};
  return Object.keys(schema.properties ?? {}).filter((n) => /password/i.test(n));
};
const isCostly = (o: Operation) => passwordFields(o).length > 0;

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
    Array.from({ length: isCostly(o) ? Math.ceil(PER_OPERATION(base) / 5) : PER_OPERATION(base) }, (_, i) => {
      const req = plan(gen, r, o);
      // One request in four attacks the transport; password bodies keep theirs invalid, so they stay out of it.
      return { o, req: i % 4 === 3 && !isCostly(o) ? attack(r, req, o, base) : req };
    }),
  );
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < planned.length) {
      const { o, req } = planned[next++]!;
      const started = performance.now();
      const headers: Record<string, string> = {
        authorization: `Bearer ${auth()}`,
        ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...req.headers,
      };
      if (headers.authorization === '') delete headers.authorization;
      const res = await fetch(`${t.origin}${base}${req.url}`, {
        method: req.method,
        headers,
        ...(req.body === undefined ? {} : { body: req.body }),
      });
      const text = await res.text();
      if (process.env.FUZZ_SLOW && performance.now() - started > 500)
        console.log(Math.round(performance.now() - started), req.method, req.url, res.status, text.slice(0, 100));
      if (!AUTH_ATTACKS.has(req.mode)) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const problem = check(doc, { status: res.status, text, headers: res.headers }, o.op, validatorFor);
      if (problem)
        problems.push(
          `${problem}\n  ${req.method} ${base}${req.url} (${req.mode})${req.body ? `\n  body: ${req.body.slice(0, 300)}` : ''}\n  answer: ${res.status} ${text.slice(0, 300)}`,
        );
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { problems, statuses, sent: planned.length };
}

describe(`fuzzing both OpenAPI documents (seed ${SEED})`, () => {
  it.each([
    ['/api/v1/docs/json', '/api/v1', () => publicKey],
    ['/api/docs/json', '/api', () => session],
  ] as const)(
    '%s: no 5xx, every error in the shape with a documented code, every success as documented',
    async (docPath, base, auth) => {
      const { problems, statuses, sent } = await fuzzSurface(docPath, base, auth);
      expect(sent).toBeGreaterThan(200);
      // The requests must get past authentication, or the fuzzing proves little.
      expect(statuses.get(401) ?? 0, JSON.stringify(Object.fromEntries(statuses))).toBeLessThan(sent * 0.1);
      expect(problems.slice(0, 15), `seed ${SEED} (FUZZ_SEED=${SEED} reproduces it): ${problems.length} problems`).toEqual([]);
    },
    120_000,
  );
});
