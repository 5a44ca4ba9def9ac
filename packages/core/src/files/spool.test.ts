import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spool } from './spool.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'leadwire-spool-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const tooLarge = () => new Error('too large');

describe('spool', () => {
  it('copies the stream aside with its size, hash and first bytes, and discards it on request', async () => {
    const heads: Buffer[] = [];
    const s = await spool(Readable.from([Buffer.from('GIF8'), Buffer.from('9a and the rest')]), {
      dir,
      maxBytes: 100,
      tooLarge,
      inspectHead: (h) => heads.push(h),
    });
    expect(await readFile(s.path, 'utf8')).toBe('GIF89a and the rest');
    expect(s.size).toBe(19);
    expect(s.sha256).toBe(createHash('sha256').update('GIF89a and the rest').digest('hex'));
    expect(heads.map((h) => h.toString())).toEqual(['GIF89a and t']);
    await s.discard();
    expect(await readdir(dir)).toEqual([]);
  });

  it('inspects a file shorter than the sniffing window once, at its end', async () => {
    const heads: Buffer[] = [];
    await (
      await spool(Readable.from([Buffer.from('tiny')]), { dir, maxBytes: 100, tooLarge, inspectHead: (h) => heads.push(h) })
    ).discard();
    expect(heads.map((h) => h.toString())).toEqual(['tiny']);
  });

  it('stops at the limit and at a refused head, leaving nothing behind', async () => {
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled += 1024;
        this.push(Buffer.alloc(1024));
      },
    });
    await expect(spool(endless, { dir, maxBytes: 10_000, tooLarge })).rejects.toThrow('too large');
    // Stream buffers read a little ahead; an unbounded copy would never return.
    expect(pulled).toBeLessThan(256 * 1024);
    const refuse = () => {
      throw new Error('not an image');
    };
    await expect(spool(Readable.from([Buffer.alloc(50)]), { dir, maxBytes: 100, tooLarge, inspectHead: refuse })).rejects.toThrow(
      'not an image',
    );
    expect(await readdir(dir)).toEqual([]);
  });
});
