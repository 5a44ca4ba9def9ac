/**
 * Setup file (vitest.config.ts `setupFiles`), run before every test file: hands the file's task to db.ts, whose
 * `drop()` keeps the databases of a file where anything failed.
 */
import { beforeAll } from 'vitest';
import { trackTestFile } from './db.ts';

// vitest insists on a destructuring pattern for the (unused) context before it hands over the suite.
// eslint-disable-next-line no-empty-pattern
beforeAll(({}, suite) => trackTestFile(suite.file));
