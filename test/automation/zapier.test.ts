/**
 * The automation surface as Zapier's own platform library sees it (issue 18, "Automation platforms"): a small app
 * definition built from our trigger, search and action definitions, validated against Zapier's app schema and run by
 * `zapier-platform-core`'s app tester against the real server, whose output checks (every trigger item has an `id`,
 * searches answer a list, creates an object) reject what the platform would reject.
 */
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { automation, testResolver } from './support.ts';

type Bundle = {
  authData?: Record<string, string>;
  inputData?: Record<string, unknown>;
  targetUrl?: string;
  subscribeData?: { id: string };
};
type Z = { request(req: Record<string, unknown>): Promise<{ data: unknown }> };
type AppTester = (method: unknown, bundle?: Bundle) => Promise<any>;
interface Zapier {
  version: string;
  createAppTester(app: unknown): AppTester;
  /** The handler Zapier runs an app with; its `validate` command checks the app against the platform's schema. */
  createAppHandler(app: unknown): (event: { command: string }) => Promise<{ results: unknown }>;
}

// CommonJS, loaded as Zapier's CLI loads it. Its checks throw (instead of only logging) when NODE_ENV starts with
// `test` as it loads; another test file run earlier in this worker may have set NODE_ENV otherwise.
const require = createRequire(import.meta.url);
const untouched = { fetch: globalThis.fetch, http: http.request, https: https.request };
const nodeEnv = process.env.NODE_ENV;
process.env.NODE_ENV = 'test';
const zapier = require('zapier-platform-core') as Zapier;
if (nodeEnv === undefined) delete process.env.NODE_ENV;
else process.env.NODE_ENV = nodeEnv;

let t: TestApp;
let key: string;
let publicKey: string;
let app: ReturnType<typeof appDefinition>;
let tester: AppTester;
beforeAll(async () => {
  t = await initTestApp({}, { resolver: testResolver });
  const org = await t.newOrg({ plan: 'max' });
  key = org.internalKey;
  publicKey = org.publicKey;
  const base = `${t.origin}/api/integrations/automation`;
  const local = (url: string) => url.replace(`${t.runtime.deps.config.BASE_URL}/integrations/automation`, base);
  const triggers = (await automation(t, 'GET', '/triggers', { apiKey: key })).body;
  const actions = (await automation(t, 'GET', '/actions', { apiKey: key })).body;
  const searches = (await automation(t, 'GET', '/searches', { apiKey: key })).body;
  const created = triggers.find((tr: { key: string }) => tr.key === 'contact.created');
  const createContact = actions.find((a: { key: string }) => a.key === 'create_contact');
  const dropdown = (source: string) =>
    local(
      actions
        .flatMap((a: { inputs: { dropdown: { source: string; url: string } | null }[] }) => a.inputs)
        .find((i: { dropdown: { source: string } | null }) => i.dropdown?.source === source).dropdown.url,
    );
  app = appDefinition({
    base,
    pollUrl: local(created.pollUrl),
    samplesUrl: local(created.samplesUrl),
    findUrl: local(searches[0].url),
    createInputs: createContact.inputs,
    dropdowns: { pipelines: dropdown('pipelines'), tags: dropdown('tags'), companies: dropdown('companies') },
  });
  tester = zapier.createAppTester(app);
});
afterAll(async () => t?.close());

const auth = () => ({ authData: { apiKey: key } });

interface Urls {
  base: string;
  pollUrl: string;
  samplesUrl: string;
  findUrl: string;
  createInputs: {
    key: string;
    label: string;
    required: boolean;
    list: boolean;
    dropdown: { source: string; value: string; label: string } | null;
  }[];
  dropdowns: Record<'pipelines' | 'tags' | 'companies', string>;
}

const display = (label: string, hidden = false) => ({ label, description: `${label}.`, ...(hidden ? { hidden } : {}) });

/** A Zapier app the way a partner would write it from our definitions: shorthand requests, dynamic dropdowns. */
function appDefinition(u: Urls) {
  const list = (key: string, noun: string, url: string, hidden = false) => ({
    key,
    noun,
    display: display(`${noun} list`, hidden),
    operation: { perform: { url } },
  });
  return {
    version: '1.0.0',
    platformVersion: zapier.version,
    // Zapier would otherwise wrap this process's http, https and global fetch to log every request, for good: test
    // files share their worker's modules, and the wrapped fetch throws on requests other files send on purpose.
    flags: { skipHttpPatch: true },
    authentication: {
      type: 'custom',
      fields: [{ key: 'apiKey', label: 'Internal API key', required: true, type: 'password' }],
      test: { url: `${u.base}/me` },
      connectionLabel: '{{label}}',
    },
    beforeRequest: [
      (request: { headers: Record<string, string> }, _z: unknown, bundle: Bundle) => {
        request.headers['X-Api-Key'] = bundle.authData!.apiKey!;
        return request;
      },
    ],
    triggers: {
      new_contact: list('new_contact', 'Contact', u.pollUrl),
      new_contact_hook: {
        key: 'new_contact_hook',
        noun: 'Contact',
        display: display('New contact (instant)'),
        operation: {
          type: 'hook',
          performSubscribe: {
            url: `${u.base}/subscribe`,
            method: 'POST',
            body: { hookUrl: '{{bundle.targetUrl}}', triggerEvent: 'contact.created' },
          },
          // A function, not a shorthand request: the answer is 204 without a body, and a shorthand request wants JSON.
          performUnsubscribe: async (z: Z, bundle: Bundle) => {
            await z.request({ url: `${u.base}/subscribe/${bundle.subscribeData!.id}`, method: 'DELETE' });
            return {};
          },
          perform: (_z: unknown, bundle: { cleanedRequest: unknown }) => [bundle.cleanedRequest],
          performList: { url: u.samplesUrl },
        },
      },
      pipelines: list('pipelines', 'Pipeline', u.dropdowns.pipelines, true),
      tags: list('tags', 'Tag', u.dropdowns.tags, true),
      companies: list('companies', 'Company', u.dropdowns.companies, true),
      // Negative control: a list whose items have no `id` (the action definitions, keyed by `key`).
      not_events: list('not_events', 'Action', `${u.base}/actions`, true),
    },
    searches: {
      find_contact: {
        key: 'find_contact',
        noun: 'Contact',
        display: display('Find contact'),
        operation: {
          inputFields: [{ key: 'email', label: 'Email', required: true }],
          perform: { url: u.findUrl, params: { email: '{{bundle.inputData.email}}' } },
        },
      },
    },
    creates: {
      create_contact: {
        key: 'create_contact',
        noun: 'Contact',
        display: display('Create contact'),
        operation: {
          // The inputs and their dropdowns as GET .../actions defines them: `<trigger>.<value>.<label>`.
          inputFields: u.createInputs.map((i) => ({
            key: i.key,
            label: i.label,
            required: i.required,
            ...(i.list ? { list: true } : {}),
            ...(i.dropdown ? { dynamic: `${i.dropdown.source}.${i.dropdown.value}.${i.dropdown.label}` } : {}),
          })),
          // z.request sends an object body as JSON; unmapped inputs stay out (the action reads "" and null as not given).
          perform: async (z: Z, bundle: Bundle) =>
            (await z.request({ url: `${u.base}/actions/create_contact`, method: 'POST', body: bundle.inputData })).data,
        },
      },
    },
    searchOrCreates: {
      find_contact: { key: 'find_contact', display: display('Find or create contact'), search: 'find_contact', create: 'create_contact' },
    },
  };
}

describe('a Zapier app over the automation surface', () => {
  it("is a valid app definition by Zapier's own schema, dropdowns and find-or-create included", () => {
    const validate = zapier.createAppHandler(app)({ command: 'validate' });
    return expect(validate.then((r) => r.results)).resolves.toEqual([]);
  });

  it('authenticates and labels the connection', async () => {
    const me = await tester(app.authentication.test, auth());
    expect(me).toMatchObject({ role: 'owner', via: 'internal_key', label: expect.stringContaining('(') });
  });

  it('polls new contacts with an id on every item, as its checks demand; an empty workspace gives []', async () => {
    expect(await tester(app.triggers.new_contact.operation.perform, auth())).toEqual([]);
    for (const email of ['z1@example.com', 'z2@example.com']) {
      expect((await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email } })).status).toBe(200);
    }
    const items = await tester(app.triggers.new_contact.operation.perform, auth());
    expect(items.map((e: { data: { contact: { email: string } } }) => e.data.contact.email)).toEqual(['z2@example.com', 'z1@example.com']);
    expect(items.every((e: { id?: string }) => typeof e.id === 'string')).toBe(true);
    // The checks are on: a list without ids is refused by the same tester.
    await expect(tester(app.triggers.not_events.operation.perform, auth())).rejects.toThrow(/missing the "id" property/);
  });

  it('subscribes, lists samples and unsubscribes a REST hook; an undeliverable hookUrl fails the subscription step', async () => {
    const sub = await tester(app.triggers.new_contact_hook.operation.performSubscribe, {
      ...auth(),
      targetUrl: 'https://hooks.example.com/hooks/standard/1/zap/',
    });
    expect(sub).toMatchObject({ enabled: true, triggerEvent: 'contact.created' });
    const samples = await tester(app.triggers.new_contact_hook.operation.performList, auth());
    expect(samples.length).toBeGreaterThan(0);
    await tester(app.triggers.new_contact_hook.operation.performUnsubscribe, { ...auth(), subscribeData: sub });
    await expect(
      tester(app.triggers.new_contact_hook.operation.performSubscribe, { ...auth(), targetUrl: 'https://intranet.example.com/hook' }),
    ).rejects.toThrow(/hook_url_refused/);
  });

  it('fills the dynamic dropdowns, then finds or creates a contact with their values', async () => {
    await call(t, 'POST', '/companies/upsert', { key: publicKey, body: { domain: 'zap.example', name: 'Zap Inc' } });
    const companies = await tester(app.triggers.companies.operation.perform, auth());
    expect(companies).toContainEqual(expect.objectContaining({ domain: 'zap.example', label: 'Zap Inc (zap.example)' }));
    expect((await tester(app.triggers.pipelines.operation.perform, auth())).length).toBeGreaterThan(0);
    expect(await tester(app.searches.find_contact.operation.perform, { ...auth(), inputData: { email: 'new@example.com' } })).toEqual([]);
    const contact = await tester(app.creates.create_contact.operation.perform, {
      ...auth(),
      inputData: { firstName: 'Zed', lastName: 'Zapper', email: 'new@example.com', company: 'zap.example', tags: ['zap'] },
    });
    expect(contact).toMatchObject({ email: 'new@example.com', company: { domain: 'zap.example' }, source: 'zapier' });
    expect(await tester(app.triggers.tags.operation.perform, auth())).toContainEqual({ id: 'zap', name: 'zap', contacts: 1 });
    const found = await tester(app.searches.find_contact.operation.perform, { ...auth(), inputData: { email: ' NEW@example.com ' } });
    expect(found).toEqual([contact]);
  });
});

describe('the test process after the Zapier runs', () => {
  it('keeps its own fetch, http and https: nothing Zapier patched leaks into the other test files of this worker', () => {
    expect({ fetch: globalThis.fetch, http: http.request, https: https.request }).toEqual(untouched);
  });
});
