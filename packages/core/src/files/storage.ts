import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Where uploaded bytes live, by opaque key. Keys are made by `newStorageKey`, never taken from a client, so a filename
 * cannot choose a location; a backend such as object storage can replace the local disk behind this interface.
 */
export interface Storage {
  /** Stores the stream under `key`; on failure nothing is left under the key. */
  put(key: string, data: Readable): Promise<void>;
  /** The bytes under `key`, or null when there are none. */
  get(key: string): Promise<Readable | null>;
  /** Removes the bytes under `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}

/** An organization's files share a folder, so removing or exporting one tenant's files is one folder. */
export function newStorageKey(orgId: string): string {
  return `${orgId}/${randomUUID()}`;
}

/** The configured storage: local disk under DATA_DIR/files, shared by the upload routes and the trash purge. */
export function storageFor(config: { DATA_DIR: string }): Storage {
  return new LocalDiskStorage(resolve(config.DATA_DIR, 'files'));
}

const KEY = /^[A-Za-z0-9_-]{1,64}(\/[A-Za-z0-9_-]{1,64}){0,3}$/;

export class LocalDiskStorage implements Storage {
  readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }

  /** Refuses anything but the key shape we generate, and re-checks containment, so no key escapes the root. */
  pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error(`Invalid storage key: ${JSON.stringify(key)}`);
    return path;
  }

  async put(key: string, data: Readable): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // Written aside and renamed into place, so a reader never sees half a file and a failure leaves no file.
    const partial = `${path}.partial-${randomUUID()}`;
    try {
      await pipeline(data, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
      await rename(partial, path);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Readable | null> {
    try {
      const handle = await open(this.pathOf(key), 'r');
      return handle.createReadStream();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
