/**
 * Setup file (vitest.config.ts `setupFiles`), run before every test file: hands the file's task to db.ts, whose
 * `drop()` keeps the databases of a file where anything failed; and, when `npm run bench:suite` asks for it
 * (LEADWIRE_FILE_CPU), records what the file cost (file-cpu.ts).
 */
import { join, relative } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { trackTestFile } from './db.ts';
import { fileMeter, recordFileCpu } from './file-cpu.ts';

// vitest insists on a destructuring pattern for the (unused) context before it hands over the suite.
// eslint-disable-next-line no-empty-pattern
beforeAll(({}, suite) => trackTestFile(suite.file));

const FILE_CPU = process.env.LEADWIRE_FILE_CPU;
if (FILE_CPU) {
  const root = join(import.meta.dirname, '..', '..');
  let finish: ReturnType<typeof fileMeter> | undefined;
  beforeAll(() => {
    finish = fileMeter();
  });
  // Registered first, so run last of the file's after-hooks: what they stop (servers, clusters) is counted.
  // eslint-disable-next-line no-empty-pattern
  afterAll(({}, suite) => {
    if (finish) recordFileCpu(FILE_CPU, { file: relative(root, suite.file.filepath), ...finish() });
  });
}
