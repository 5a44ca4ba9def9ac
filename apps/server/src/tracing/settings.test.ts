import { ConfigError, loadConfig } from '@leadwire/core/config';
import { describe, expect, it } from 'vitest';
import { tracingPlan } from './settings.ts';

const plan = (env: Record<string, string>) => tracingPlan(loadConfig(env));
const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('which variables turn tracing on', () => {
  it('is off with none of them', () => {
    expect(plan({})).toEqual({ on: false, why: 'no OTLP endpoint or exporter set' });
  });

  it('is on with an endpoint, protobuf by default, to <endpoint>/v1/traces', () => {
    expect(plan({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      on: true,
      protocol: 'http/protobuf',
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'leadwire',
    });
  });

  it('takes the traces endpoint and protocol as given, over the general ones', () => {
    expect(
      plan({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://general:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/custom',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'crm-eu',
      }),
    ).toEqual({ on: true, protocol: 'http/json', endpoint: 'https://traces.example.com/custom', serviceName: 'crm-eu' });
  });

  it('shows the endpoint without the credentials a URL may carry (it is logged at boot)', () => {
    expect(plan({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:s3cret@collector.example.com/v1/traces?api_key=k3y' })).toMatchObject({
      endpoint: 'https://collector.example.com/v1/traces',
    });
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp alone, to the specification default endpoint', () => {
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({ on: true, endpoint: 'http://localhost:4318/v1/traces' });
  });

  it('is off when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(plan({ ...endpoint, OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({ on: false });
    expect(plan({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toMatchObject({ on: false });
  });

  it('treats an empty variable as unset', () => {
    expect(plan({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' })).toMatchObject({ on: false });
  });
});

describe('a typo stops the boot, naming the variable', () => {
  it.each([
    [{ OTEL_TRACES_EXPORTER: 'otpl' }, 'OTEL_TRACES_EXPORTER: must be otlp or none'],
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER: must be otlp or none'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf or http/json (gRPC is not bundled)'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/proto' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be http/protobuf or http/json'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT:'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:'],
    [{ OTEL_SDK_DISABLED: 'yes' }, 'OTEL_SDK_DISABLED:'],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceid_ratio' }, 'OTEL_TRACES_SAMPLER:'],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG:'],
    [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG:'],
  ])('%o', (env, message) => {
    expect(problems(env).some((p) => p.startsWith(message))).toBe(true);
  });

  it('accepts every standard sampler', () => {
    for (const s of [
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
      expect(problems({ OTEL_TRACES_SAMPLER: s, OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual([]);
  });
});
