import { lookup } from 'node:dns/promises';
import type { Resolver } from '../../context.ts';

/** The resolver's shape is declared with the other dependencies, in context.ts (the floor): importers keep this path. */
export type { Resolver };

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
