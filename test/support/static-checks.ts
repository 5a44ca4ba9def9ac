/**
 * The first step of `npm test`: the type check and the linter run side by side (each is mostly one process on one
 * core, so on two cores this halves their wall time), each one's output printed in one piece when it ends, so the two
 * never interleave. Exits 1 when either fails, naming which; vitest runs only after both passed.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string): string => path.join(ROOT, 'node_modules/.bin', name);

const CHECKS = [
  { name: 'typecheck', command: bin('tsc'), args: ['-p', 'tsconfig.json'] },
  { name: 'lint', command: bin('eslint'), args: ['.'] },
];

function check({ name, command, args }: (typeof CHECKS)[number]): Promise<boolean> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.once('error', (err) => {
      output += `${err.message}\n`;
    });
    child.once('close', (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(`${ok ? '✓' : '✗'} ${name} ${ok ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s\n`);
      if (output.trim()) process.stdout.write(`${output.trimEnd()}\n`);
      resolve(ok);
    });
  });
}

const results = await Promise.all(CHECKS.map(check));
const failed = CHECKS.filter((_, i) => !results[i]).map((c) => c.name);
if (failed.length) {
  process.stdout.write(`\nnpm test stops here: ${failed.join(' and ')} failed; the tests did not run.\n`);
  process.exit(1);
}
