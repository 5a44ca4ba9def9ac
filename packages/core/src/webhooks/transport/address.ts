import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Resolver } from './resolver.ts';

/**
 * How the special-purpose ranges ipaddr.js names (from the IANA registries, RFC 6890 and successors) read in the reason
 * shown to the owner in `disabledReason`. Only `unicast` is ever reached: every other range is refused, including one
 * a later ipaddr.js adds (named as ipaddr.js names it) and the globally reachable anycast ones (AS112, AMT), where no
 * receiver lives. Cloud metadata services live inside these ranges (169.254.169.254, fd00:ec2::254, 100.100.100.200,
 * 192.0.0.192).
 */
const RANGE_LABELS: Readonly<Record<string, string>> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  as112: 'AS112 anycast',
  amt: 'AMT relay anycast',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local (deprecated)',
  discard: 'discard-only',
  rfc6145: 'IPv4-translated',
  rfc6052: 'local-use NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  as112v6: 'AS112 anycast',
  deprecatedOrchid: 'ORCHID (deprecated)',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'drone remote ID',
  segmentRouting: 'segment routing',
};

/** Only global unicast (2000::/3) is ever public in IPv6; ipaddr.js calls the rest of the unassigned space unicast too. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
/** NAT64's well-known prefix: the IPv4 address in its last 32 bits is the one reached (the local-use /48 is refused). */
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * The canonical (WHATWG, RFC 5952) form of an IPv6 address: lower case, zeros compressed, an embedded dotted IPv4
 * written as hex. ipaddr.js reads `::10.0.0.1` (IPv4-compatible, which a socket reaches as ::a00:1) as the IPv4-mapped
 * ::ffff:a00:1; the hex form it reads as the socket does.
 */
function canonicalIpv6(ip: string): string {
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/** The address a socket to `ip` reaches, parsed; an IPv4-mapped one (::ffff:0:0/96) as the IPv4 address it is. */
function parse(ip: string, family: 4 | 6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (family === 4) return ipaddr.IPv4.parse(ip);
  const v6 = ipaddr.IPv6.parse(canonicalIpv6(ip));
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** True for 127.0.0.0/8 and ::1 (and ::ffff:127.x.y.z): the only private addresses WEBHOOKS_UNSAFE_ALLOW_LOOPBACK opens. */
export function isLoopback(ip: string): boolean {
  const family = isIP(ip);
  // A zone id picks an interface; NAT64 (64:ff9b::7f00:1) leaves the host, so it is never this host's loopback.
  if (family === 0 || ip.includes('%')) return false;
  return parse(ip, family as 4 | 6).range() === 'loopback';
}

/**
 * Why `ip` is not a public unicast address, or null when it is. An IPv4 address embedded in IPv6 (mapped, NAT64) is
 * judged as the IPv4 address it reaches.
 */
export function unsafeAddressReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  // A zone id (fe80::1%eth0) picks a local interface: nothing a public receiver needs.
  if (family === 6 && ip.includes('%')) return `${ip} is a scoped (zone id) address`;
  const addr = parse(ip, family as 4 | 6);
  if (addr.kind() === 'ipv6' && addr.match(NAT64))
    return unsafeAddressReason(ipaddr.fromByteArray(addr.toByteArray().slice(12)).toString());
  const shown = addr.kind() === 'ipv4' && family === 6 ? addr.toString() : ip;
  const range = addr.range() as string;
  if (range !== 'unicast') return `${shown} is in the ${RANGE_LABELS[range] ?? range} range`;
  if (addr.kind() === 'ipv6' && !addr.match(GLOBAL_UNICAST)) return `${ip} is outside 2000::/3 (reserved, not global unicast)`;
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
