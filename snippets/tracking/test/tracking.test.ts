import { afterEach, describe, expect, it } from 'vitest';
import { runInNewContext } from 'node:vm';
import { closePages, COLLECT, goBack, openPage, ORG, type Page, SCRIPT_SRC } from './harness.ts';

afterEach(closePages);

const VISITOR = /^[0-9a-z]{28}$/;

describe('a page view', () => {
  it('goes to the collect endpoint beside the script, as text, with the page, referrer, title and a visitor id', () => {
    const page = openPage('https://shop.example/pricing?plan=pro#faq', { referrer: 'https://www.google.com/', title: 'Pricing' });
    page.paste();
    expect(page.sent).toEqual([
      {
        via: 'beacon',
        url: COLLECT,
        body: {
          org: ORG,
          url: 'https://shop.example/pricing?plan=pro',
          referrer: 'https://www.google.com/',
          title: 'Pricing',
          visitor: expect.stringMatching(VISITOR),
        },
      },
    ]);
  });

  it('derives the endpoint from wherever the script was loaded from (a self-hosted API under a path)', () => {
    const page = openPage('https://shop.example/');
    page.paste({ 'data-org': ORG }, 'https://crm.example.org/leadwire/api/embed/tracking.js?v=3');
    expect(page.sent[0]?.url).toBe('https://crm.example.org/leadwire/api/track/pageview');
  });

  it('sends null for an empty referrer and title, and cuts a long title to 300 characters', () => {
    const page = openPage('https://shop.example/', { title: '' });
    page.paste();
    expect(page.sent[0]?.body).toMatchObject({ referrer: null, title: null });
    const long = openPage('https://shop.example/', { title: 'x'.repeat(1000) });
    long.paste();
    expect(long.sent[0]?.body.title).toBe('x'.repeat(300));
  });

  it('is not sent without data-org, or without a current script', () => {
    const page = openPage('https://shop.example/');
    page.paste({});
    page.paste({ 'data-org': '' });
    expect(page.sent).toEqual([]);
    // A broken first copy does not silence a correct second one.
    page.paste();
    expect(page.sent).toHaveLength(1);
  });
});

describe('pasted twice', () => {
  it('fires once per page view and adds two globals (the guard and leadwire), whatever the copies do', () => {
    const page = openPage('https://shop.example/');
    const before = new Set(Object.keys(page.win));
    page.paste();
    page.paste();
    page.paste({ 'data-org': 'another-org' });
    expect(page.sent).toHaveLength(1);
    expect(Object.keys(page.win).filter((k) => !before.has(k))).toEqual(['__leadwireTracking', 'leadwire']);
    // The history hooks are installed once too: one navigation, one page view.
    page.win.history.pushState({}, '', '/next');
    expect(page.sent.map((s) => s.body.url)).toEqual(['https://shop.example/', 'https://shop.example/next']);
  });
});

describe('single-page apps', () => {
  it('count pushState, replaceState to a new path and popstate; the previous page is the referrer', () => {
    const page = openPage('https://app.example/', { referrer: 'https://news.example/' });
    page.paste();
    page.win.history.pushState({}, '', '/products');
    page.win.history.replaceState({}, '', '/products/42');
    goBack(page, 'https://app.example/');
    expect(page.sent.map((s) => [s.body.url, s.body.referrer])).toEqual([
      ['https://app.example/', 'https://news.example/'],
      ['https://app.example/products', 'https://app.example/'],
      ['https://app.example/products/42', 'https://app.example/products'],
      ['https://app.example/', 'https://app.example/products/42'],
    ]);
    expect(new Set(page.sent.map((s) => s.body.visitor)).size).toBe(1);
  });

  it('do not count the same path twice in a row: same URL, query or hash changes', () => {
    const page = openPage('https://app.example/list?utm_source=mail');
    page.paste();
    page.win.history.pushState({}, '', '/list?utm_source=mail');
    page.win.history.replaceState({}, '', '/list');
    page.win.history.pushState({}, '', '/list?page=2');
    page.win.history.pushState({}, '', '/list#top');
    goBack(page, 'https://app.example/list?page=2');
    expect(page.sent).toHaveLength(1);
    page.win.history.pushState({}, '', '/other');
    expect(page.sent).toHaveLength(2);
  });

  it('leave the host navigation untouched: state, URL and its own errors', () => {
    const page = openPage('https://app.example/');
    page.paste();
    page.win.history.pushState({ step: 2 }, '', '/wizard');
    expect(page.win.history.state).toEqual({ step: 2 });
    expect(page.win.location.pathname).toBe('/wizard');
    // A cross-origin URL is the host's mistake; it still throws as it would without the snippet.
    expect(() => page.win.history.pushState({}, '', 'https://elsewhere.example/')).toThrow();
  });
});

describe('identification', () => {
  it('sends ?email= and ?c= with the page view', () => {
    const byEmail = openPage('https://shop.example/offer?email=ada%40example.com');
    byEmail.paste();
    expect(byEmail.sent[0]?.body).toMatchObject({ email: 'ada@example.com' });
    expect(byEmail.sent[0]?.body).not.toHaveProperty('contactId');
    const byId = openPage('https://shop.example/offer?c=6f1c2d3e-0000-4000-8000-000000000001');
    byId.paste();
    expect(byId.sent[0]?.body).toMatchObject({ contactId: '6f1c2d3e-0000-4000-8000-000000000001' });
    expect(byId.sent[0]?.body).not.toHaveProperty('email');
  });

  it('remembers the visitor in a first-party cookie: lw_vid, a year, SameSite=Lax, Secure on https', () => {
    const first = openPage('https://shop.example/');
    first.paste();
    const visitor = first.sent[0]?.body.visitor as string;
    expect(first.cookieWrites).toEqual([`lw_vid=${visitor};max-age=31536000;path=/;samesite=lax;secure`]);
    // The next visit, days later, carries the same id and renews the cookie.
    const next = openPage('https://shop.example/blog', { cookies: ['other=1', `lw_vid=${visitor}`] });
    next.paste();
    expect(next.sent[0]?.body.visitor).toBe(visitor);
    expect(next.cookieWrites).toEqual([`lw_vid=${visitor};max-age=31536000;path=/;samesite=lax;secure`]);
    const plain = openPage('http://shop.example/');
    plain.paste();
    expect(plain.cookieWrites[0]).toMatch(/^lw_vid=[0-9a-z]{28};max-age=31536000;path=\/;samesite=lax$/);
  });

  it('replaces a cookie value it did not write', () => {
    const page = openPage('https://shop.example/', { cookies: ['lw_vid=<script>'] });
    page.paste();
    expect(page.sent[0]?.body.visitor).toMatch(VISITOR);
  });

  it('still counts where cookies cannot be reached (a sandboxed frame), under an id for this page only', () => {
    const page = openPage('https://shop.example/', { cookiesBlocked: true });
    expect(() => page.paste()).not.toThrow();
    expect(page.sent[0]?.body.visitor).toMatch(VISITOR);
    expect(page.cookieWrites).toEqual([]);
  });
});

describe('automation and privacy signals', () => {
  it('sends nothing from an automated browser (navigator.webdriver), adds no global and no cookie', () => {
    const page = openPage('https://shop.example/?email=bot@example.com', { webdriver: true });
    page.paste();
    page.win.history.pushState({}, '', '/next');
    expect(page.sent).toEqual([]);
    expect(page.cookieWrites).toEqual([]);
    expect(page.win).not.toHaveProperty('__leadwireTracking');
  });

  for (const [name, opts] of [
    ['Global Privacy Control', { gpc: true }],
    ['Do Not Track', { doNotTrack: '1' }],
  ] as const) {
    it(`under ${name}: an anonymous count only (no visitor, cookie, identity, query string or referrer)`, () => {
      const page = openPage('https://shop.example/offer?email=ada%40example.com&c=x#top', {
        ...opts,
        referrer: 'https://mail.example/',
        cookies: ['lw_vid=abcdefgh12345678'],
      });
      page.paste();
      page.win.history.pushState({}, '', '/thanks?c=1');
      expect(page.sent.map((s) => s.body)).toEqual([
        { org: ORG, url: 'https://shop.example/offer', referrer: null, title: 'Home' },
        { org: ORG, url: 'https://shop.example/thanks', referrer: null, title: 'Home' },
      ]);
      // The cookie an earlier visit set is removed, and no new one is written.
      expect(page.cookieWrites).toEqual(['lw_vid=;max-age=0;path=/;samesite=lax;secure']);
    });
  }

  it('treats Do Not Track "0" or unset, and GPC false, as no signal', () => {
    const page = openPage('https://shop.example/', { gpc: false, doNotTrack: '0' });
    page.paste();
    expect(page.sent[0]?.body.visitor).toMatch(VISITOR);
  });
});

describe('transport', () => {
  it('falls back to fetch with keepalive and no credentials when sendBeacon is missing, refuses or throws', () => {
    for (const beacon of ['missing', 'refuses', 'throws'] as const) {
      const page = openPage('https://shop.example/', { beacon });
      page.paste();
      expect(page.sent, beacon).toEqual([
        {
          via: 'fetch',
          url: COLLECT,
          body: expect.objectContaining({ org: ORG }),
          init: { method: 'POST', body: expect.any(String), keepalive: true, credentials: 'omit' },
        },
      ]);
    }
  });

  it('never throws into the host page when nothing can send, or the request fails', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const [beacon, fetchMode] of [
        ['missing', 'missing'],
        ['throws', 'throws'],
        ['refuses', 'rejects'],
      ] as const) {
        const page = openPage('https://shop.example/', { beacon, fetch: fetchMode });
        expect(() => page.paste()).not.toThrow();
        expect(() => page.win.history.pushState({}, '', '/next')).not.toThrow();
        expect(page.win.location.pathname).toBe('/next');
        expect(page.sent).toEqual([]);
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('does not throw when the script address is not a URL', () => {
    const page = openPage('https://shop.example/');
    expect(() => page.paste({ 'data-org': ORG }, '')).not.toThrow();
    expect(SCRIPT_SRC).toMatch(/^https:/);
  });
});

/** The one-line stub docs/website.md prints, run in the page as a script of its own. */
const STUB = 'window.leadwire=window.leadwire||{q:[],track:function(){this.q.push(arguments)}}';
const EVENTS = 'https://api.leadwire.test/api/track/event';
type Track = { leadwire: { track: (name: unknown, props?: unknown) => void } };
const track = (page: Page, name: unknown, props?: unknown) => (page.win as unknown as Track).leadwire.track(name, props);

describe('custom events: leadwire.track(name, props)', () => {
  it('goes to the event endpoint beside the script with the page, the visitor and the identity, as a page view does', () => {
    const page = openPage('https://shop.example/pricing?email=ada%40example.com#plans');
    page.paste();
    track(page, 'signup', { plan: 'pro', seats: 3 });
    expect(page.sent).toHaveLength(2);
    expect(page.sent[1]).toEqual({
      via: 'beacon',
      url: EVENTS,
      body: {
        org: ORG,
        url: 'https://shop.example/pricing?email=ada%40example.com',
        visitor: page.sent[0]!.body.visitor,
        email: 'ada@example.com',
        name: 'signup',
        props: { plan: 'pro', seats: 3 },
      },
    });
  });

  it('calls made through the stub before the snippet loaded are sent once it loads, in order, after the page view', () => {
    const page = openPage('https://shop.example/');
    runInNewContext(STUB, { window: page.win });
    track(page, 'signup', { plan: 'pro' });
    track(page, 'video_played');
    expect(page.sent).toEqual([]);
    page.paste();
    expect(page.sent.map((s) => [s.url, s.body.name, s.body.props])).toEqual([
      [COLLECT, undefined, undefined],
      [EVENTS, 'signup', { plan: 'pro' }],
      [EVENTS, 'video_played', undefined],
    ]);
    // The stub pasted again after the snippet (a second copy of the page's code) keeps the real one.
    runInNewContext(STUB, { window: page.win });
    page.paste();
    track(page, 'upgrade');
    expect(page.sent.map((s) => s.body.name ?? 'pageview')).toEqual(['pageview', 'signup', 'video_played', 'upgrade']);
  });

  it('under Global Privacy Control: no visitor, identity or query string', () => {
    const page = openPage('https://shop.example/offer?email=ada%40example.com', { gpc: true });
    page.paste();
    track(page, 'signup', { plan: 'pro' });
    expect(page.sent[1]?.body).toEqual({ org: ORG, url: 'https://shop.example/offer', name: 'signup', props: { plan: 'pro' } });
  });

  it('never throws into the page: props that are not JSON lose the call; an automated browser leaves the stub queueing', () => {
    const page = openPage('https://shop.example/');
    page.paste();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => track(page, 'x', cycle)).not.toThrow();
    expect(() => track(page, 'x', { n: 10n })).not.toThrow();
    expect(page.sent).toHaveLength(1);

    const bot = openPage('https://shop.example/', { webdriver: true });
    runInNewContext(STUB, { window: bot.win });
    bot.paste();
    track(bot, 'signup');
    expect(bot.sent).toEqual([]);
    expect((bot.win as unknown as { leadwire: { q: unknown[] } }).leadwire.q).toHaveLength(1);
  });
});
