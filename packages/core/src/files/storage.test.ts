import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDiskStorage, newStorageKey } from './storage.ts';

let root: string;
let storage: LocalDiskStorage;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'leadwire-storage-'));
  storage = new LocalDiskStorage(root);
});
afterAll(async () => rm(root, { recursive: true, force: true }));

describe('LocalDiskStorage', () => {
  it('puts, gets and deletes by key under its root', async () => {
    const key = newStorageKey('3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10');
    await storage.put(key, Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(await readFile(join(root, key), 'utf8')).toBe('hello world');
    expect(await text((await storage.get(key))!)).toBe('hello world');
    await storage.delete(key);
    expect(await storage.get(key)).toBeNull();
    await storage.delete(key);
  });

  it('refuses keys that are not ours, so none can reach outside the root', () => {
    for (const key of ['../escape', 'a/../../b', '/etc/passwd', 'a//b', '', 'a/b.c', 'x\\y']) {
      expect(() => storage.pathOf(key)).toThrow(/Invalid storage key/);
    }
  });

  it('leaves nothing behind when the stream fails mid-way', async () => {
    const key = newStorageKey('org-fail');
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1024));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.put(key, failing)).rejects.toThrow('client went away');
    expect(await readdir(join(root, 'org-fail'))).toEqual([]);
  });
});
