import { describe, expect, it } from 'vitest';
import type { Logger } from '../context.ts';
import { BossRuntime } from './boss.ts';

/** A logger that keeps what it was told, by level. */
function recorder(): { lines: { level: string; msg: string | undefined }[]; log: Logger } {
  const lines: { level: string; msg: string | undefined }[] = [];
  const at = (level: string) => (_obj: object, msg?: string) => void lines.push({ level, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') } };
}

const shutdownError = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe("the job queue's errors", () => {
  it('are errors while it runs, and an ended connection only once it is stopping', async () => {
    const { lines, log } = recorder();
    // Never started: no connection is made; pg-boss's own emitter carries the errors as a failing pool would.
    const runtime = new BossRuntime('postgres://nobody@127.0.0.1:1/none', log);
    runtime.boss.emit('error', shutdownError());
    expect(lines).toEqual([{ level: 'error', msg: 'job queue error' }]);

    await runtime.stop();
    runtime.boss.emit('error', shutdownError());
    runtime.boss.emit('error', Object.assign(new Error('deadlock detected'), { code: '40P01' }));
    expect(lines.slice(1)).toEqual([
      { level: 'info', msg: 'job queue connection ended by the shutdown' },
      { level: 'error', msg: 'job queue error' },
    ]);
  });
});
