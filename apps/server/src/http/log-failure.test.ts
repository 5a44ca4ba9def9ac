import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { logFailure } from './log-failure.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

describe('logFailure', () => {
  it('logs nothing for a client error, the stack for a server error, and one warn line without stack for a 503', () => {
    const { log, lines } = capture();
    logFailure(log, new Error('bad input'), { status: 400, body: { error: 'bad', code: 'validation_failed' } }, 'request failed');
    logFailure(log, new Error('boom'), { status: 500, body: { error: 'x', code: 'internal_error' } }, 'request failed');
    logFailure(
      log,
      new Error('hashing slots full'),
      { status: 503, body: { error: 'busy', code: 'service_unavailable' } },
      'request failed',
    );
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'request failed', err: { message: 'boom' } });
    expect((lines[0]!.err as { stack?: string }).stack).toContain('Error: boom');
    expect(lines[1]).toMatchObject({ level: 40, msg: 'request failed', code: 'service_unavailable', reason: 'hashing slots full' });
    expect(JSON.stringify(lines[1])).not.toContain('stack');
  });
});
