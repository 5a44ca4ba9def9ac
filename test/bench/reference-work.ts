/**
 * The same-run reference of `npm run bench:suite`: a fixed amount of the work a test run is made of (building and
 * parsing JSON, compressing, hashing), run by one process a core, so that its time moves with the host as the suite's
 * does. Prints its own CPU seconds.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

const ROUNDS = 600;
const doc = {
  items: Array.from({ length: 2_000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b', String(i % 7)], score: i * 1.5 })),
};
let digest = '';
for (let i = 0; i < ROUNDS; i++) {
  const text = JSON.stringify(doc);
  const back = JSON.parse(text) as typeof doc;
  if (back.items.length !== doc.items.length) throw new Error('the reference work went wrong');
  digest = createHash('sha256').update(gzipSync(text)).update(digest).digest('hex');
}
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ cpuSeconds: (cpu.user + cpu.system) / 1e6, digest })}\n`);
