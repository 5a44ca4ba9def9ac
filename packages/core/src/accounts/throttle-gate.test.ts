import { describe, expect, it } from 'vitest';
import { ThrottleGate } from './throttle-gate.ts';

/** A task that records how many tasks ran at once, in all and per address, and finishes when told. */
function tracker() {
  let running = 0;
  let peak = 0;
  const perAddress = new Map<string, number>();
  let peakPerAddress = 0;
  const release: (() => void)[] = [];
  const task = (address: string) => async () => {
    running++;
    peak = Math.max(peak, running);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    peakPerAddress = Math.max(peakPerAddress, perAddress.get(address)!);
    await new Promise<void>((resolve) => release.push(resolve));
    running--;
    perAddress.set(address, perAddress.get(address)! - 1);
  };
  const drain = async () => {
    while (release.length || running) {
      release.splice(0).forEach((r) => r());
      await new Promise((r) => setImmediate(r));
    }
  };
  return { task, drain, stats: () => ({ running, peak, peakPerAddress }) };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('ThrottleGate', () => {
  it('checks one address one attempt at a time, so a flood from it holds one connection', async () => {
    const gate = new ThrottleGate(4);
    const t = tracker();
    const all = Promise.all(Array.from({ length: 20 }, () => gate.run('203.0.113.9', t.task('203.0.113.9'))));
    await flush();
    expect(t.stats().running).toBe(1);
    await t.drain();
    await all;
    expect(t.stats().peakPerAddress).toBe(1);
    expect(gate.addresses).toBe(0);
  });

  it('checks different addresses side by side, never more than its concurrency at once', async () => {
    const gate = new ThrottleGate(4);
    const t = tracker();
    const addresses = Array.from({ length: 10 }, (_, i) => `198.51.100.${i}`);
    const all = Promise.all(addresses.flatMap((a) => [gate.run(a, t.task(a)), gate.run(a, t.task(a))]));
    await flush();
    expect(t.stats().running).toBe(4);
    await t.drain();
    await all;
    expect(t.stats()).toMatchObject({ peak: 4, peakPerAddress: 1 });
    expect(gate.addresses).toBe(0);
  });

  it('lets the next attempt of an address run when one before it failed', async () => {
    const gate = new ThrottleGate(1);
    const failed = gate.run('192.0.2.1', () => Promise.reject(new Error('refused')));
    const next = gate.run('192.0.2.1', () => Promise.resolve('checked'));
    await expect(failed).rejects.toThrow('refused');
    await expect(next).resolves.toBe('checked');
    expect(gate.addresses).toBe(0);
  });
});
