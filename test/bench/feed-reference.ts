import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Statement } from '@leadwire/db';
import type { CpuShare } from './cpu.ts';
import type { FeedWorkspace } from './feed-load.ts';
import { libpqEnv, measurePgbench } from './pgbench.ts';

export interface FeedReferenceResult {
  name: string;
  tps: number;
  latencyAvgMs: number | null;
  cpu: CpuShare | null;
}

/**
 * The reference of a feed phase: the very statement a page runs (prepared, the same parameters), driven by pgbench
 * over the same number of connections, from the same thousand positions. What the database alone does per page, so
 * the API's share of it holds across machines.
 */
export async function runFeedReference<P>(o: {
  name: string;
  binary: string;
  url: string;
  statement: Statement<P, unknown>;
  /** The statement's parameters; `txid` and `seq` are replaced by a position of the workspace per transaction. */
  params: Omit<P, 'txid' | 'seq'>;
  workspace: FeedWorkspace;
  clients: number;
  warmupSeconds: number;
  seconds: number;
  meter: () => () => CpuShare | null;
}): Promise<FeedReferenceResult> {
  const env = libpqEnv(o.url);
  const defines: string[] = [];
  // $n -> :pn; the position is computed per transaction exactly as the HTTP phase's cursors were.
  const text = o.statement.text.replace(/\$(\d+)/g, (_, n: string) => `:p${n}`);
  const lines = ['\\set i random(0, 999)', `\\set g (2 * :i + 1) * ${o.workspace.events} / 2000`];
  lines.push(`\\set t 1 + :g * (${o.workspace.cur} - 2) / ${o.workspace.events}`);
  o.statement.slots.forEach((slot, i) => {
    const v = `p${i + 1}`;
    if ('value' in slot) defines.push('-D', `${v}=${String(slot.value)}`);
    else if (slot.param === 'txid') lines.push(`\\set ${v} :t`);
    else if (slot.param === 'seq') lines.push(`\\set ${v} 0`);
    else {
      const value = (o.params as Record<string, unknown>)[slot.param];
      defines.push('-D', `${v}=${Array.isArray(value) ? `{${value.join(',')}}` : String(value)}`);
    }
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'leadwire-feed-pgbench-'));
  const script = path.join(dir, 'feed.sql');
  await fs.writeFile(script, `${lines.join('\n')}\n${text};\n`);
  try {
    const m = await measurePgbench({ ...o, env, script, defines });
    return { name: o.name, tps: m.tps, latencyAvgMs: m.number(/latency average = ([\d.]+) ms/), cpu: m.cpu };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
