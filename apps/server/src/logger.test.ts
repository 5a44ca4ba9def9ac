import { describe, expect, it } from 'vitest';
import { loggablePath } from './logger.ts';

describe('loggablePath', () => {
  it("drops the query string and masks a workflow intake URL's token, the only credential of that route", () => {
    const token = `wfh_${'a1B2'.repeat(10)}xyz`;
    expect(loggablePath(`/api/workflows/hooks/${token}`)).toBe('/api/workflows/hooks/[redacted]');
    expect(loggablePath(`/api/workflows/hooks/${token}?x=1`)).toBe('/api/workflows/hooks/[redacted]');
    expect(loggablePath('/api/contacts/search?email=ada@example.com')).toBe('/api/contacts/search');
    expect(loggablePath('/api/workflows/3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10/runs')).toBe(
      '/api/workflows/3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10/runs',
    );
  });

  it("masks a tracked link's token, the link a text's recipient follows (test/tracking/logs.test.ts reads a real server's lines)", () => {
    expect(loggablePath('/api/t/l/Ab3_x-9ZqLmN0pQrStUvWx')).toBe('/api/t/l/[redacted]');
    expect(loggablePath('/api/t/l/Ab3_x-9ZqLmN0pQrStUvWx?c=1')).toBe('/api/t/l/[redacted]');
    expect(loggablePath('/api/t/l/%3Cscript%3E/more')).toBe('/api/t/l/[redacted]/more');
    expect(loggablePath('/api/track/pageview')).toBe('/api/track/pageview');
  });
});
