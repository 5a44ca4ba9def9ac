import { lookup } from 'node:dns/promises';

/**
 * Turns a receiver's host name into the addresses to check and connect to. A dependency so that tests can answer
 * differently on each call (DNS rebinding) without a DNS server; production uses the system resolver.
 */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
