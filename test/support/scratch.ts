import { readFileSync, statfsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** tmpfs's magic number in statfs(2). */
const TMPFS = 0x01021994;
/** Room the run needs at most: the clusters of three workers' files and their WAL, with margin (measured in docs/testing.md). */
const NEEDED_BYTES = 2 * 1024 ** 3;

/**
 * Where tests put PostgreSQL clusters and the other files they make and remove by the thousand: a memory file system
 * when the machine has one with room that may run programs (`/dev/shm`), else `/tmp`. `LEADWIRE_TEST_TMP` chooses
 * another folder.
 *
 * Why: every test file clones the run's template (415 relations, a file or more each) and drops it again. On the ext4
 * without a journal of our development machine, creating files soon after thousands were deleted walks the inode
 * bitmap for each one (the kernel's `recently_deleted` check): one CREATE DATABASE cost 450 ms of CPU there against
 * 17-36 ms on tmpfs, and the test cluster's CPU over a whole run fell from 85-100 s to 41 s. Nothing here needs to
 * survive a reboot: a cluster kept after a failure stays until a later run removes it (a week) or the machine restarts.
 */
export const SCRATCH = pickScratch();

function pickScratch(): string {
  const chosen = process.env.LEADWIRE_TEST_TMP;
  if (chosen) return chosen;
  try {
    const shm = statfsSync('/dev/shm');
    if (shm.type === TMPFS && shm.bavail * shm.bsize >= NEEDED_BYTES && !mountedNoexec('/dev/shm')) return '/dev/shm';
  } catch {
    // no /dev/shm (or not readable): the disk it is
  }
  return '/tmp';
}

/** Whether /proc/mounts lists `dir` as noexec: tests run the SDK's installed command line from a temporary folder. */
function mountedNoexec(dir: string): boolean {
  const mount = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .findLast((fields) => fields[1] === dir);
  return mount?.[3]?.split(',').includes('noexec') ?? false;
}

/**
 * A fresh folder `<SCRATCH>/leadwire-<label>-XXXXXX`, traversable by the `postgres` OS user that the embedded server
 * runs as when the tests run as root (mkdtemp makes it 0700).
 */
export async function scratchDir(label: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(SCRATCH, `leadwire-${label}-`));
  await fs.chmod(dir, 0o755);
  return dir;
}
