import { BlockList, isIP } from 'node:net';
import type { Resolver } from './resolver.ts';

/**
 * Address ranges a webhook must never reach (IANA special-purpose registries, RFC 6890 and successors), each with the
 * reason shown to the owner in `disabledReason`. Cloud metadata services live inside these ranges (169.254.169.254,
 * fd00:ec2::254, 100.100.100.200, 192.0.0.192).
 */
const RANGES: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', 'reserved (6to4 relay)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  // IPv4 inside IPv6 is judged as its IPv4 address first (below); these two rows are the backstop if that ever misses.
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['64:ff9b:1::', 48, 'ipv6', 'local-use NAT64'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['2001::', 23, 'ipv6', 'IETF protocol assignments'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', '6to4'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['5f00::', 16, 'ipv6', 'segment routing'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local (deprecated)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = RANGES.map(([net, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, reason, label: `${net}/${prefix}` };
});

/** Only global unicast (2000::/3) is ever public in IPv6; everything outside it is reserved or local by definition. */
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/**
 * The canonical (WHATWG, RFC 5952) form of an IPv6 address: lower case, zeros compressed, an embedded dotted IPv4
 * written as hex. Without it `0:0:0:0:0:ffff:10.0.0.1` and `::ffff:a00:1` would take different paths below.
 */
function canonicalIpv6(ip: string): string {
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) one, given in canonical form. */
function embeddedIpv4(canonical: string): string | null {
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!hex?.[1] || !hex[2]) return null;
  const hi = parseInt(hex[1], 16);
  const lo = parseInt(hex[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

const ipv6Loopback = new BlockList();
ipv6Loopback.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8 and ::1 (and ::ffff:127.x.y.z): the only private addresses WEBHOOKS_UNSAFE_ALLOW_LOOPBACK opens. */
export function isLoopback(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return ip.startsWith('127.');
  if (family !== 6 || ip.includes('%')) return false;
  // A mapped address is the IPv4 one on this host's own stack; a NAT64 one leaves the host, so it is never loopback.
  const canonical = canonicalIpv6(ip);
  const v4 = canonical.startsWith('::ffff:') ? embeddedIpv4(canonical) : null;
  if (v4) return v4.startsWith('127.');
  return ipv6Loopback.check(ip, 'ipv6');
}

/**
 * Why `ip` is not a public unicast address, or null when it is. An IPv4 address embedded in IPv6 (mapped, NAT64) is
 * judged as the IPv4 address it reaches.
 */
export function unsafeAddressReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    // A zone id (fe80::1%eth0) picks a local interface: nothing a public receiver needs.
    if (ip.includes('%')) return `${ip} is a scoped (zone id) address`;
    const v4 = embeddedIpv4(canonicalIpv6(ip));
    if (v4) return unsafeAddressReason(v4);
  }
  const fam = family === 4 ? 'ipv4' : 'ipv6';
  for (const r of lists) {
    if (r.family === fam && r.list.check(ip, fam)) return `${ip} is in ${r.label} (${r.reason})`;
  }
  if (fam === 'ipv6' && !globalUnicast.check(ip, 'ipv6')) return `${ip} is outside 2000::/3 (reserved, not global unicast)`;
  return null;
}

/**
 * `kind` tells a refusal's cause: `unsafe` (a private or internal address: the endpoint is disabled at once),
 * `unresolved` (no answer from DNS right now: a delivery attempt fails and is retried) or `invalid` (no usable host).
 */
export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string; kind: 'unsafe' | 'unresolved' | 'invalid' };

/**
 * Decides where a delivery may connect: resolves the URL's host once and refuses when ANY answer is unsafe (a host
 * that resolves to a private address among public ones is an attack, not a misconfiguration). The caller connects to
 * the returned address, never resolving again, so DNS rebinding between check and connect cannot happen.
 */
export async function checkUrlAddress(url: string, opts: { resolver: Resolver; allowLoopback: boolean }): Promise<AddressCheck> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return { ok: false, reason: 'the URL cannot be parsed', kind: 'invalid' };
  }
  if (host === '') return { ok: false, reason: 'the URL has no host', kind: 'invalid' };
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: string[];
  if (isIP(literal)) addresses = [literal];
  else {
    try {
      addresses = await opts.resolver(literal);
    } catch (err) {
      return {
        ok: false,
        reason: `${literal} could not be resolved (${(err as { code?: string }).code ?? 'lookup failed'})`,
        kind: 'unresolved',
      };
    }
    if (addresses.length === 0) return { ok: false, reason: `${literal} has no addresses`, kind: 'unresolved' };
  }
  for (const address of addresses) {
    const reason = unsafeAddressReason(address);
    if (reason && !(opts.allowLoopback && isLoopback(address))) {
      const why =
        literal === address ? reason : `${literal} resolves to ${isIP(address) ? reason : `${JSON.stringify(address)}, ${reason}`}`;
      return { ok: false, reason: `${why}; private and internal addresses are refused`, kind: 'unsafe' };
    }
  }
  return { ok: true, address: addresses[0] as string };
}
