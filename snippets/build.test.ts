import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAll, gzipSize, snippetPackages } from './build.ts';

describe('the snippet build', () => {
  it('builds every folder under snippets/ with a package.json and src/index.ts, one minified IIFE each', async () => {
    const root = await mkdtemp(join(tmpdir(), 'snippets-'));
    try {
      const make = async (name: string, files: Record<string, string>) => {
        for (const [path, text] of Object.entries(files)) {
          await mkdir(join(root, name, path, '..'), { recursive: true });
          await writeFile(join(root, name, path), text);
        }
      };
      await make('alpha', {
        'package.json': '{"leadwire":{"output":"a.js","gzipBudget":500}}',
        'src/index.ts': 'import { n } from "./n.ts";\nconst label: string = "alpha";\nconsole.log(label, n);\n',
        'src/n.ts': 'export const n: number = 1;\n',
      });
      await make('beta', { 'package.json': '{}', 'src/index.ts': 'console.log("beta");\n' });
      await make('not-a-package', { 'src/index.ts': 'console.log("x");\n' });
      await make('no-entry', { 'package.json': '{}' });
      expect(snippetPackages(root).map((p) => p.name)).toEqual(['alpha', 'beta']);
      const built = await buildAll(root);
      expect(built.map((b) => [b.name, b.gzipBudget])).toEqual([
        ['alpha', 500],
        ['beta', undefined],
      ]);
      const alpha = await readFile(join(root, 'alpha', 'dist', 'a.js'), 'utf8');
      // One line, types stripped, the import inlined, wrapped so nothing leaks into the page's globals.
      expect(alpha).toMatch(/^\(\(\)=>\{[^\n]*console\.log\(\w+,1\);?\}\)\(\);\n$/);
      expect(alpha).not.toMatch(/import|: string/);
      expect(await readFile(join(root, 'beta', 'dist', 'beta.js'), 'utf8')).toContain('console.log("beta")');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('keeps every real snippet within its gzip budget', async () => {
    const packages = snippetPackages();
    expect(packages.map((p) => p.name)).toContain('tracking');
    for (const p of packages) {
      expect(p.gzipBudget, `${p.name} declares leadwire.gzipBudget in its package.json`).toBeGreaterThan(0);
      const size = gzipSize(await readFile(p.outFile));
      expect(size, `${p.name}: ${size} B gzipped`).toBeLessThanOrEqual(p.gzipBudget!);
    }
    expect(packages.find((p) => p.name === 'tracking')?.gzipBudget).toBe(1000);
    expect(packages.find((p) => p.name === 'lead-capture')?.gzipBudget).toBe(5000);
  });
});
