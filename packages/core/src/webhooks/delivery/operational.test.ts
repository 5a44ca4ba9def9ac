import { describe, expect, it } from 'vitest';
import { endpointDisabled, endpointEnabled, shownUrl } from './operational.ts';

describe('the endpoint URL in operational events', () => {
  it('is the origin and "/…": a path or query that may hold a credential never reaches the subscribers', () => {
    expect(shownUrl('https://hooks.slack.com/services/T000/B000/XXXXSECRET')).toBe('https://hooks.slack.com/…');
    expect(shownUrl('https://example.com/hook?token=s3cret#frag')).toBe('https://example.com/…');
    expect(shownUrl('https://example.com?token=s3cret')).toBe('https://example.com/…');
    expect(shownUrl('https://example.com:8443/')).toBe('https://example.com:8443/');
    expect(shownUrl('https://user:pass@example.com/')).toBe('https://example.com/');
    expect(shownUrl('http://[::1]:3000/x')).toBe('http://[::1]:3000/…');
    // Stored URLs were validated, but a payload must never echo whatever a row holds.
    expect(shownUrl('not a url /secret')).toBe('…');
    expect(shownUrl('mailto:someone@example.com')).toBe('…');
  });

  it('is what webhook.endpoint_disabled and webhook.endpoint_enabled carry', () => {
    const e = { orgId: 'o', id: 'e', url: 'https://zap.example/hooks/catch/123/abcSECRET/' };
    const at = new Date(0);
    for (const ev of [endpointDisabled(e, 'disabled by a user', 0, at), endpointEnabled(e, null, at)]) {
      expect(ev.data.endpoint).toEqual({ id: 'e', url: 'https://zap.example/…' });
      expect(JSON.stringify(ev)).not.toContain('SECRET');
    }
  });
});
