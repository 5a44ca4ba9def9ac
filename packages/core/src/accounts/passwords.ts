import { randomBytes, timingSafeEqual } from 'node:crypto';
import { HashSlots, type HashSlotLimits } from './hash-slots.ts';
import { halfTheCores } from '../config.ts';
import { HashWorkers } from './hash-workers.ts';

const KEY_LENGTH = 32;
const R = 8;
const P = 1;
/** scrypt needs 128 * N * r bytes; twice that leaves Node's own margin. */
const maxmemFor = (n: number, r: number) => 256 * n * r;

/**
 * OWASP's scrypt floor is N=2^17, r=8, p=1 (about 100 ms and 128 MB per hash on this hardware class), the default of
 * PASSWORD_HASH_COST. New hashes use the configured cost; a stored hash carries its own, so changing the setting never
 * locks anyone out, and a raised cost applies as passwords are next set.
 */
let params = { N: 2 ** 17, r: R, p: P, maxmem: maxmemFor(2 ** 17, R) };
let dummyHash = makeDummyHash();
/** Every hash and check of the process goes through these slots (defaults as in config.ts), each slot a niced thread. */
let slots = new HashSlots({ concurrency: halfTheCores(), queue: 16, maxWaitMs: 5_000 });
const workers = new HashWorkers(slots.limits.concurrency);
const scrypt = (password: string, salt: Buffer, length: number, opts: typeof params) => workers.scrypt(password, salt, length, opts);

/** Set once at boot from PASSWORD_HASH_COST (log2 of N). */
export function setPasswordHashCost(cost: number): void {
  params = { N: 2 ** cost, r: R, p: P, maxmem: maxmemFor(2 ** cost, R) };
  dummyHash = makeDummyHash();
}

/** Set at boot from PASSWORD_HASH_CONCURRENCY, _QUEUE and _MAX_WAIT_MS; hashes already running keep their old slots. */
export function setPasswordHashSlots(limits: HashSlotLimits): void {
  slots = new HashSlots(limits);
  workers.resize(limits.concurrency);
}

/** The hashing threads' kernel task ids and nice values (tests check they run below the API's priority). */
export function passwordHashThreads() {
  return workers.describe();
}

/** The process's hashing slots (tests hold one to see who waits for it). */
export function passwordHashSlots(): HashSlots {
  return slots;
}

/** `scrypt$N$r$p$salt$hash`, base64: self-describing so parameters can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await slots.run(() => scrypt(password, salt, KEY_LENGTH, params));
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const opts = { N: Number(n), r: Number(r), p: Number(p), maxmem: maxmemFor(Number(n), Number(r)) };
  const actual = await slots.run(() => scrypt(password, Buffer.from(salt, 'base64'), expected.length, opts));
  return timingSafeEqual(actual, expected);
}

/**
 * A well-formed hash of no password anyone knows, with the current parameters. Checking a password against it costs
 * exactly what a real check costs, so an unknown email answers in the same time as a wrong password.
 */
export function dummyPasswordHash(): string {
  return dummyHash;
}

function makeDummyHash(): string {
  return ['scrypt', params.N, params.r, params.p, randomBytes(16).toString('base64'), randomBytes(KEY_LENGTH).toString('base64')].join('$');
}
