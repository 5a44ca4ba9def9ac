import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ScoreAdjusterError, adjusterPayload, noAdjustment, openAiCompatibleAdjuster } from './adjuster.ts';
import type { AdjustInput, OpenAiCompatibleAdjusterOptions } from './adjuster.ts';
import { answer, completion, replyJson, startOpenAiStub, unusedBaseUrl } from './openai-stub.test-support.ts';
import type { OpenAiStub } from './openai-stub.test-support.ts';

const API_KEY = 'sk-test-0123456789abcdef';
const MODEL = 'gpt-test-mini';

let stub: OpenAiStub;
let baseUrl: string;

beforeAll(async () => {
  stub = await startOpenAiStub();
  baseUrl = stub.baseUrl;
});

afterAll(async () => {
  await stub.close();
});

beforeEach(() => {
  stub.requests = [];
  stub.handler = answer(0);
});

const contact: AdjustInput['contact'] = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada.lovelace@example.com',
  phone: '+33612345678',
  hasCompany: true,
  jobTitle: 'Chief Technology Officer',
  website: 'https://ada.example.com',
  linkedin: 'https://www.linkedin.com/in/ada-lovelace',
  source: 'referral',
  hasBooking: false,
  custom: { budget: 'over 9000 EUR', secretNote: 'call her at home' },
};
const input: AdjustInput = { base: 65, contact };

function make(extra: Partial<OpenAiCompatibleAdjusterOptions> = {}) {
  const errors: ScoreAdjusterError[] = [];
  const adjuster = openAiCompatibleAdjuster({
    baseUrl,
    apiKey: API_KEY,
    model: MODEL,
    onError: (err) => errors.push(err),
    ...extra,
  });
  return { adjuster, errors };
}

describe('noAdjustment', () => {
  it('always adjusts by 0', async () => {
    await expect(noAdjustment.adjust(input)).resolves.toBe(0);
  });
});

describe('openAiCompatibleAdjuster', () => {
  it('speaks the chat-completions protocol and returns the adjustment', async () => {
    stub.handler = answer(7);
    const { adjuster, errors } = make();

    await expect(adjuster.adjust(input)).resolves.toBe(7);
    expect(errors).toEqual([]);

    expect(stub.requests).toHaveLength(1);
    const req = stub.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.body).toMatchObject({
      model: MODEL,
      temperature: 0,
      response_format: { type: 'json_object' },
    });
    const [system, user, ...rest] = req.body?.messages ?? [];
    expect(rest).toEqual([]);
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('"adjustment"');
    expect(user?.role).toBe('user');

    expect(JSON.parse(user?.content ?? 'null')).toEqual({
      baseScore: 65,
      contact: {
        hasName: true,
        hasEmail: true,
        hasPhone: true,
        hasCompany: true,
        hasWebsite: true,
        hasLinkedin: true,
        hasBooking: false,
        jobTitle: 'Chief Technology Officer',
        source: 'referral',
        customFieldKeys: ['budget', 'secretNote'],
      },
    });
  });

  it('sends no email, phone, name, URLs or custom values', async () => {
    const { adjuster } = make();
    await adjuster.adjust(input);
    const raw = stub.requests[0]!.rawBody;
    for (const secret of [
      'ada.lovelace@example.com',
      '+33612345678',
      '33612345678',
      'Lovelace',
      'ada.example.com',
      'linkedin.com/in',
      'over 9000',
      'call her at home',
    ]) {
      expect(raw).not.toContain(secret);
    }
  });

  it('tolerates a trailing slash in baseUrl', async () => {
    const { adjuster } = make({ baseUrl: `${baseUrl}/` });
    await adjuster.adjust(input);
    expect(stub.requests[0]!.url).toBe('/v1/chat/completions');
  });

  it('omits Authorization when no apiKey is configured', async () => {
    const { adjuster } = make({ apiKey: undefined });
    await adjuster.adjust(input);
    expect(stub.requests[0]!.headers.authorization).toBeUndefined();
  });

  it.each([
    [40, 15],
    [-40, -15],
    [16, 15],
    [7.6, 8],
    [-3, -3],
  ])('clamps/rounds an answered adjustment of %d to %d', async (asked, expected) => {
    stub.handler = answer(asked);
    const { adjuster, errors } = make();
    await expect(adjuster.adjust(input)).resolves.toBe(expected);
    expect(errors).toEqual([]);
  });

  it('accepts content wrapped in a markdown code fence', async () => {
    stub.handler = (_req, res) => replyJson(res, 200, completion('```json\n{"adjustment": 4, "reason": "x"}\n```'));
    const { adjuster } = make();
    await expect(adjuster.adjust(input)).resolves.toBe(4);
  });

  it('returns 0 and reports a non-2xx answer without leaking the api key', async () => {
    // A gateway that echoes request headers back in its error page.
    stub.handler = (req, res) => replyJson(res, 500, JSON.stringify({ error: 'boom', echoed: req.headers.authorization }));
    const { adjuster, errors } = make();

    await expect(adjuster.adjust(input)).resolves.toBe(0);
    expect(errors).toHaveLength(1);
    const err = errors[0]!;
    expect(err).toBeInstanceOf(ScoreAdjusterError);
    expect(err.kind).toBe('http');
    expect(err.status).toBe(500);
    expect(err.message).toContain('boom');
    expect(err.message).not.toContain(API_KEY);
    expect(JSON.stringify(err)).not.toContain(API_KEY);
  });

  it('returns 0 when the message content is not JSON', async () => {
    stub.handler = (_req, res) => replyJson(res, 200, completion('I would add about 5 points.'));
    const { adjuster, errors } = make();
    await expect(adjuster.adjust(input)).resolves.toBe(0);
    expect(errors.map((e) => e.kind)).toEqual(['invalid_response']);
  });

  it('returns 0 when the response body itself is not JSON', async () => {
    stub.handler = (_req, res) => replyJson(res, 200, '<html>oops</html>');
    const { adjuster, errors } = make();
    await expect(adjuster.adjust(input)).resolves.toBe(0);
    expect(errors.map((e) => e.kind)).toEqual(['invalid_response']);
  });

  it.each([
    ['missing adjustment', JSON.stringify({ reason: 'no idea' })],
    ['string adjustment', JSON.stringify({ adjustment: '5' })],
    ['array content', JSON.stringify([5])],
  ])('returns 0 on a schema mismatch (%s)', async (_name, content) => {
    stub.handler = (_req, res) => replyJson(res, 200, completion(content));
    const { adjuster, errors } = make();
    await expect(adjuster.adjust(input)).resolves.toBe(0);
    expect(errors.map((e) => e.kind)).toEqual(['invalid_response']);
  });

  it('returns 0 when there are no choices or the content is null', async () => {
    for (const body of [JSON.stringify({ choices: [] }), completion(null)]) {
      stub.handler = (_req, res) => replyJson(res, 200, body);
      const { adjuster, errors } = make();
      await expect(adjuster.adjust(input)).resolves.toBe(0);
      expect(errors.map((e) => e.kind)).toEqual(['invalid_response']);
    }
  });

  it('returns 0 after timeoutMs when the server never answers', async () => {
    stub.handler = () => {
      // Never respond.
    };
    const { adjuster, errors } = make({ timeoutMs: 200 });
    const started = performance.now();
    await expect(adjuster.adjust(input)).resolves.toBe(0);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(2000);
    expect(errors.map((e) => e.kind)).toEqual(['timeout']);
  });

  it('returns 0 when the caller aborts', async () => {
    stub.handler = () => {
      // Never respond; the caller gives up first.
    };
    const { adjuster, errors } = make({ timeoutMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(adjuster.adjust(input, controller.signal)).resolves.toBe(0);
    expect(errors.map((e) => e.kind)).toEqual(['aborted']);
  });

  it('returns 0 when the server is unreachable', async () => {
    const { adjuster, errors } = make({ baseUrl: await unusedBaseUrl() });
    await expect(adjuster.adjust(input)).resolves.toBe(0);
    expect(errors.map((e) => e.kind)).toEqual(['network']);
    expect(errors[0]!.message).not.toContain(API_KEY);
  });

  it('does not throw without onError, nor when onError itself throws', async () => {
    stub.handler = (_req, res) => replyJson(res, 503, 'unavailable');
    const silent = openAiCompatibleAdjuster({ baseUrl, model: MODEL });
    await expect(silent.adjust(input)).resolves.toBe(0);

    const throwing = openAiCompatibleAdjuster({
      baseUrl,
      model: MODEL,
      onError: () => {
        throw new Error('reporter broke');
      },
    });
    await expect(throwing.adjust(input)).resolves.toBe(0);
  });

  it('uses an injected fetch', async () => {
    const calls: string[] = [];
    const { adjuster } = make({
      fetch: async (url, init) => {
        calls.push(url instanceof Request ? url.url : url.toString());
        return globalThis.fetch(url, init);
      },
    });
    stub.handler = answer(-6);
    await expect(adjuster.adjust(input)).resolves.toBe(-6);
    expect(calls).toEqual([`${baseUrl}/chat/completions`]);
  });
});

describe('adjusterPayload', () => {
  it('reports absent and blank fields as absent and clips long free text', () => {
    const payload = adjusterPayload({
      base: 0,
      contact: {
        email: '  ',
        jobTitle: 'x'.repeat(1000),
        custom: Object.fromEntries([...Array(80).keys()].map((k) => [`k${k}`, k])),
      },
    });
    const c = payload.contact as Record<string, unknown>;
    expect(c.hasEmail).toBe(false);
    expect(c.hasName).toBe(false);
    expect(c.source).toBeNull();
    expect((c.jobTitle as string).length).toBe(200);
    expect((c.customFieldKeys as string[]).length).toBe(50);
  });
});
