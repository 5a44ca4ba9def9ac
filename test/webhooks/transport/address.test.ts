import { describe, expect, it } from 'vitest';
import { checkUrlAddress, isLoopback, unsafeAddressReason } from '../../../packages/core/src/webhooks/transport/address.ts';
import type { Resolver } from '../../../packages/core/src/webhooks/transport/resolver.ts';

describe('unsafeAddressReason', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.192', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.175.48.1', 'AS112 anycast'],
    ['192.31.196.1', 'AS112 anycast'],
    ['192.52.193.1', 'AMT relay anycast'],
  ])('refuses IPv4 %s (%s)', (ip, range) => {
    expect(unsafeAddressReason(ip)).toBe(`${ip} is in the ${range} range`);
  });

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['FE80::ABCD', 'link-local'],
    ['fec0::1', 'site-local (deprecated)'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001::1', 'Teredo'],
    ['2001:1ff::1', 'reserved'],
    ['2002:a00:1::1', '6to4'],
    ['100::1', 'discard-only'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['5f00::1', 'segment routing'],
    ['::ffff:0:808:808', 'IPv4-translated'],
    ['2001:2::1', 'benchmarking'],
    ['2001:3::1', 'AMT relay anycast'],
    ['2001:4:112::1', 'AS112 anycast'],
    ['2620:4f:8000::1', 'AS112 anycast'],
    ['2001:10::1', 'ORCHID (deprecated)'],
    ['2001:20::1', 'ORCHIDv2'],
    ['2001:30::1', 'drone remote ID'],
  ])('refuses IPv6 %s (%s)', (ip, range) => {
    expect(unsafeAddressReason(ip)).toBe(`${ip} is in the ${range} range`);
  });

  // ipaddr.js reads ::8.8.8.8 as the mapped ::ffff:8.8.8.8; a socket reaches ::808:808 (IPv4-compatible): judged as that.
  it.each(['::10.0.0.1', '::8.8.8.8', '::808:808', '4000::1', '1::1', 'e000::1'])(
    'refuses IPv6 %s outside global unicast 2000::/3 (IPv4-compatible and unassigned space)',
    (ip) => {
      expect(unsafeAddressReason(ip)).toMatch(/is outside 2000::\/3/);
    },
  );

  it('refuses a scoped address (zone id) whatever its range', () => {
    expect(unsafeAddressReason('fe80::1%eth0')).toBe('fe80::1%eth0 is a scoped (zone id) address');
    expect(unsafeAddressReason('2606:4700::1%eth0')).toBe('2606:4700::1%eth0 is a scoped (zone id) address');
  });

  it.each([
    ['::ffff:10.0.0.1', '10.0.0.1 is in the private range'],
    ['::ffff:a00:1', '10.0.0.1 is in the private range'],
    ['::FFFF:0A00:0001', '10.0.0.1 is in the private range'],
    ['0:0:0:0:0:ffff:10.0.0.1', '10.0.0.1 is in the private range'],
    ['0000:0000:0000:0000:0000:ffff:0a00:0001', '10.0.0.1 is in the private range'],
    ['::ffff:127.0.0.1', '127.0.0.1 is in the loopback range'],
    ['::ffff:169.254.169.254', '169.254.169.254 is in the link-local range'],
    ['::ffff:a9fe:a9fe', '169.254.169.254 is in the link-local range'],
    ['::ffff:100.100.100.200', '100.100.100.200 is in the carrier-grade NAT range'],
    ['::ffff:192.0.0.192', '192.0.0.192 is in the reserved range'],
    ['64:ff9b::a00:1', '10.0.0.1 is in the private range'],
    ['64:ff9b::10.0.0.1', '10.0.0.1 is in the private range'],
    ['64:ff9b:0:0:0:0:a9fe:a9fe', '169.254.169.254 is in the link-local range'],
    ['64:ff9b::7f00:1', '127.0.0.1 is in the loopback range'],
  ])('judges IPv4 inside IPv6 (%s) by the IPv4 address it reaches', (ip, reason) => {
    expect(unsafeAddressReason(ip)).toContain(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '192.0.1.1',
    '192.169.0.1',
    '198.20.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001::200e',
    '2001:200::1',
    // IPv4 inside IPv6 that reaches a public address: judged by that address.
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
  ])('allows the public address %s', (ip) => {
    expect(unsafeAddressReason(ip)).toBeNull();
  });

  it.each(['localhost', '', 'example.com', '010.0.0.1', '1.2.3', '::g', '[::1]'])('refuses %j, which is not an IP address', (ip) => {
    expect(unsafeAddressReason(ip)).toBe('not an IP address');
  });
});

describe('isLoopback', () => {
  it.each(['127.0.0.1', '127.1.2.3', '127.255.255.255', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1'])(
    '%s is loopback',
    (ip) => {
      expect(isLoopback(ip)).toBe(true);
    },
  );
  // NAT64 leaves the host: 64:ff9b::7f00:1 is a remote gateway's business, never this host's loopback.
  it.each(['10.0.0.1', '128.0.0.1', '126.255.255.255', '::', '::2', 'fe80::1', '64:ff9b::7f00:1', '::127.0.0.1', '::1%lo', 'localhost'])(
    '%s is not loopback',
    (ip) => {
      expect(isLoopback(ip)).toBe(false);
    },
  );
});

/** Answers `answers` and counts its calls. */
function fixed(answers: string[]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(
    async (host: string) => {
      calls.push(host);
      return answers;
    },
    { calls },
  );
}

describe('checkUrlAddress', () => {
  it('resolves a host name once and returns its first address when all are public', async () => {
    const resolver = fixed(['93.184.216.34', '2606:2800:220:1::1']);
    expect(await checkUrlAddress('https://hooks.example.com:8443/in?x=1', { resolver, allowLoopback: false })).toEqual({
      ok: true,
      address: '93.184.216.34',
    });
    expect(resolver.calls).toEqual(['hooks.example.com']);
  });

  it('takes IP literals as they are, without resolving (brackets removed)', async () => {
    const resolver = fixed(['10.0.0.1']);
    expect(await checkUrlAddress('https://8.8.8.8/', { resolver, allowLoopback: false })).toEqual({ ok: true, address: '8.8.8.8' });
    expect(await checkUrlAddress('https://[2606:4700:4700::1111]:444/', { resolver, allowLoopback: false })).toEqual({
      ok: true,
      address: '2606:4700:4700::1111',
    });
    expect(resolver.calls).toEqual([]);
  });

  it('refuses when ANY answer is unsafe, naming the host and the address', async () => {
    const r = await checkUrlAddress('https://mixed.example/', {
      resolver: fixed(['93.184.216.34', '169.254.169.254']),
      allowLoopback: false,
    });
    expect(r).toEqual({
      ok: false,
      kind: 'unsafe',
      reason: 'mixed.example resolves to 169.254.169.254 is in the link-local range; private and internal addresses are refused',
    });
  });

  it.each([
    ['https://10.0.0.1/', '10.0.0.1 is in the private range'],
    // The WHATWG parser turns these spellings into 127.0.0.1 / ::ffff:7f00:1 before the check sees them.
    ['https://0x7f.1/', '127.0.0.1 is in the loopback range'],
    ['https://2130706433/', '127.0.0.1 is in the loopback range'],
    ['https://[::ffff:127.0.0.1]/', '127.0.0.1 is in the loopback range'],
    ['https://[fd00:ec2::254]/', 'fd00:ec2::254 is in the unique-local range'],
    ['https://[::]/', ':: is in the unspecified range'],
  ])('refuses the literal %s', async (url, reason) => {
    expect(await checkUrlAddress(url, { resolver: fixed([]), allowLoopback: false })).toEqual({
      ok: false,
      kind: 'unsafe',
      reason: `${reason}; private and internal addresses are refused`,
    });
  });

  it('allowLoopback opens 127.0.0.0/8 and ::1, and nothing else private', async () => {
    const allow = { resolver: fixed([]), allowLoopback: true };
    expect(await checkUrlAddress('https://127.0.0.1:9999/', allow)).toEqual({ ok: true, address: '127.0.0.1' });
    expect(await checkUrlAddress('https://[::1]:9999/', allow)).toEqual({ ok: true, address: '::1' });
    expect(await checkUrlAddress('https://[::ffff:127.0.0.1]/', allow)).toEqual({ ok: true, address: '::ffff:7f00:1' });
    expect(await checkUrlAddress('https://local.test/', { resolver: fixed(['127.0.0.1', '::1']), allowLoopback: true })).toEqual({
      ok: true,
      address: '127.0.0.1',
    });
    for (const url of [
      'https://10.0.0.1/',
      'https://169.254.169.254/',
      'https://[64:ff9b::7f00:1]/',
      'https://[fe80::1]/',
      'https://0.0.0.0/',
    ]) {
      expect(await checkUrlAddress(url, allow)).toMatchObject({ ok: false, kind: 'unsafe' });
    }
    expect(
      await checkUrlAddress('https://local.test/', { resolver: fixed(['127.0.0.1', '192.168.0.10']), allowLoopback: true }),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^local\.test resolves to 192\.168\.0\.10/) as unknown,
    });
    expect(await checkUrlAddress('https://127.0.0.1/', { resolver: fixed([]), allowLoopback: false })).toMatchObject({
      ok: false,
      kind: 'unsafe',
    });
  });

  it('a resolver failure is "unresolved", with its code when it has one', async () => {
    const nx: Resolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }));
    expect(await checkUrlAddress('https://gone.example/', { resolver: nx, allowLoopback: false })).toEqual({
      ok: false,
      kind: 'unresolved',
      reason: 'gone.example could not be resolved (ENOTFOUND)',
    });
    const odd: Resolver = () => Promise.reject(new Error('boom'));
    expect(await checkUrlAddress('https://odd.example/', { resolver: odd, allowLoopback: false })).toEqual({
      ok: false,
      kind: 'unresolved',
      reason: 'odd.example could not be resolved (lookup failed)',
    });
  });

  it('an empty answer is "unresolved"', async () => {
    expect(await checkUrlAddress('https://empty.example/', { resolver: fixed([]), allowLoopback: true })).toEqual({
      ok: false,
      kind: 'unresolved',
      reason: 'empty.example has no addresses',
    });
  });

  it('an answer that is not an IP address is refused as unsafe', async () => {
    expect(await checkUrlAddress('https://weird.example/', { resolver: fixed(['93.184.216.34', 'evil']), allowLoopback: true })).toEqual({
      ok: false,
      kind: 'unsafe',
      reason: 'weird.example resolves to "evil", not an IP address; private and internal addresses are refused',
    });
  });

  it('a URL without a usable host is "invalid"', async () => {
    const resolver = fixed(['8.8.8.8']);
    expect(await checkUrlAddress('not a url', { resolver, allowLoopback: false })).toEqual({
      ok: false,
      kind: 'invalid',
      reason: 'the URL cannot be parsed',
    });
    expect(await checkUrlAddress('https://[::1/', { resolver, allowLoopback: false })).toEqual({
      ok: false,
      kind: 'invalid',
      reason: 'the URL cannot be parsed',
    });
    expect(await checkUrlAddress('mailto:someone', { resolver, allowLoopback: false })).toEqual({
      ok: false,
      kind: 'invalid',
      reason: 'the URL has no host',
    });
    expect(resolver.calls).toEqual([]);
  });
});
