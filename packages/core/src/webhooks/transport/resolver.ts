import { lookup } from 'node:dns/promises';

/**
 * Turns a receiver's host name into the addresses to check and connect to. A dependency so that tests can answer
 * differently on each call (DNS rebinding) without a DNS server; production uses the system resolver.
 */
export type Resolver = (hostname: string) => Promise<string[]>;

/** getaddrinfo has no time-out of its own: a name server that never answers would hold a request or an attempt. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** `resolve`, given up on with an ETIMEOUT error after `timeoutMs`. */
export function withTimeout(resolve: Resolver, timeoutMs: number): Resolver {
  return async (hostname) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`lookup of ${hostname} timed out`), { code: 'ETIMEOUT' })), timeoutMs);
    });
    try {
      return await Promise.race([resolve(hostname), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The system resolver (getaddrinfo, so /etc/hosts counts), given up on after 5 s. */
export const systemResolver: Resolver = withTimeout(
  async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address),
  LOOKUP_TIMEOUT_MS,
);
