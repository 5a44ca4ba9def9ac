import { completion, replyJson, startOpenAiStub, type OpenAiStub } from '#core/scoring/openai-stub.test-support.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { newForm, submissions, submitJson } from './support.ts';

/** The AI lead router (LEAD_ROUTER=ai) against a local OpenAI-compatible endpoint, the score adjuster's. */
let t: TestApp;
let a: TestOrg;
let stub: OpenAiStub;
let enterprise: { id: string; stages: { id: string }[] };
beforeAll(async () => {
  stub = await startOpenAiStub();
  t = await initTestApp({
    LEAD_ROUTER: 'ai',
    SCORE_ADJUSTER_URL: stub.baseUrl,
    SCORE_ADJUSTER_API_KEY: 'sk-router-test',
    SCORE_ADJUSTER_MODEL: 'router-model',
  });
  a = await newTestOrg(t);
  enterprise = await a.owner.pipelines.create.mutate({ name: 'Enterprise', stages: ['New', 'Won'] });
});
afterAll(async () => {
  await t?.close();
  await stub?.close();
});

const answers = {
  email: 'cto@bigcorp.example',
  first_name: 'Ada',
  topic: 'Pricing',
  consent: true,
  message: 'We have 5,000 seats to license',
};
const placementOf = async (email: string) =>
  t.sql<{ pipeline_id: string; stage_id: string }>(
    `select pi.pipeline_id, pi.stage_id from pipeline_items pi join contacts c on c.id = pi.contact_id where c.organization_id = ? and c.email = ?`,
    [a.orgId, email],
  );
const defaultPipelineId = async () =>
  (await t.sql<{ id: string }>(`select id from pipelines where organization_id = ? and is_default`, [a.orgId]))[0]!.id;

describe('the AI lead router', () => {
  it('asks the endpoint with the pipelines and the non-identifying answers, and places the lead where it says', async () => {
    stub.requests.length = 0;
    stub.handler = (_req, res) => replyJson(res, 200, completion(JSON.stringify({ pipeline: 'enterprise' })));
    const form = await newForm(a.member);
    expect((await submitJson(t, form.id, answers)).status).toBe(200);
    expect(await placementOf('cto@bigcorp.example')).toEqual([{ pipeline_id: enterprise.id, stage_id: enterprise.stages[0]!.id }]);

    // The score adjuster's job may ask the same endpoint too; the router's request is the one with its prompt.
    const req = stub.requests.find((r) => r.rawBody.includes('route an inbound'));
    expect(req!.url).toBe('/v1/chat/completions');
    expect(req!.headers.authorization).toBe('Bearer sk-router-test');
    expect(req!.body).toMatchObject({ model: 'router-model', temperature: 0 });
    const user = JSON.parse(req!.body!.messages[1]!.content);
    expect(user).toEqual({
      pipelines: [expect.any(String), 'Enterprise'],
      form: 'Contact us',
      answers: {
        'First name': 'Ada',
        Topic: 'Pricing',
        'I agree to be contacted': 'true',
        'Your message': 'We have 5,000 seats to license',
      },
    });
    expect(req!.rawBody).not.toContain('cto@bigcorp.example');
  });

  it('falls back to the default pipeline when the endpoint fails or names no pipeline of the organization', async () => {
    const form = await newForm(a.member);
    stub.handler = (_req, res) => replyJson(res, 500, '{"error":"overloaded"}');
    expect((await submitJson(t, form.id, { ...answers, email: 'fail@example.com' })).status).toBe(200);
    stub.handler = (_req, res) => replyJson(res, 200, completion(JSON.stringify({ pipeline: 'Another org pipeline' })));
    expect((await submitJson(t, form.id, { ...answers, email: 'unknown@example.com' })).status).toBe(200);
    stub.handler = (_req, res) => replyJson(res, 200, completion('not json'));
    expect((await submitJson(t, form.id, { ...answers, email: 'garbled@example.com' })).status).toBe(200);
    const fallback = await defaultPipelineId();
    for (const email of ['fail@example.com', 'unknown@example.com', 'garbled@example.com']) {
      expect((await placementOf(email)).map((p) => p.pipeline_id)).toEqual([fallback]);
    }
    expect(await submissions(t, form.id)).toHaveLength(3);
  });

  it('is not asked when the form names its pipeline', async () => {
    const form = await newForm(a.member, { pipelineId: enterprise.id });
    stub.requests.length = 0;
    expect((await submitJson(t, form.id, { ...answers, email: 'fixed@example.com' })).status).toBe(200);
    expect(stub.requests.filter((r) => r.url === '/v1/chat/completions' && r.rawBody.includes('route an inbound'))).toEqual([]);
    expect((await placementOf('fixed@example.com')).map((p) => p.pipeline_id)).toEqual([enterprise.id]);
  });
});
