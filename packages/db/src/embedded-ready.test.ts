import { describe, expect, it } from 'vitest';
import { readinessWatcher } from './embedded.ts';

const READY = 'LOG:  database system is ready to accept connections\n';
const OTHER = 'LOG:  could not receive data from client: Connection reset by peer\n';

describe("the embedded cluster's readiness, read from its output", () => {
  it('is seen in a chunk that carries many lines after it (a busy reader)', () => {
    const ready = readinessWatcher();
    expect(ready(OTHER.repeat(3))).toBe(false);
    expect(ready(`${OTHER}${READY}${OTHER.repeat(10)}`)).toBe(true);
  });

  it('is seen when the phrase is split between two chunks, wherever the split', () => {
    // Every split inside the phrase itself (after 'LOG:  ', before the line's end).
    for (let at = 'LOG:  '.length + 1; at < READY.length - 1; at++) {
      const ready = readinessWatcher();
      expect(ready(OTHER + READY.slice(0, at))).toBe(false);
      expect(ready(READY.slice(at) + OTHER.repeat(5))).toBe(true);
    }
  });

  it('is not seen before the server says it', () => {
    const ready = readinessWatcher();
    for (const chunk of [
      'LOG:  database system was shut down at 2026-11-29 03:46:01 UTC\n',
      'FATAL:  the database system is starting up\n',
    ])
      expect(ready(chunk)).toBe(false);
  });
});
