import type { Resolver } from '#core/webhooks/transport/resolver.ts';

/** Public addresses (TEST-NET is refused as documentation space, so these are ordinary public unicast ones). */
export const PUBLIC_V4 = '93.184.215.14';
export const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

/**
 * A DNS a test controls: names answer with what `dns` maps them to (edit it to move a host), unknown names fail
 * the way getaddrinfo does. Counts look-ups so a test can tell a URL was (or was not) checked again.
 */
export function testDns(initial: Record<string, string[]>) {
  const dns = new Map(Object.entries(initial));
  const lookups: string[] = [];
  const resolver: Resolver = async (host) => {
    lookups.push(host);
    const answer = dns.get(host);
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answer;
  };
  return { dns, lookups, resolver };
}

/** What a `whsec_` secret holds: the random bytes behind the prefix. */
export const secretBytes = (secret: string) => Buffer.from(secret.slice('whsec_'.length), 'base64');
