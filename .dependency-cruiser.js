// @ts-check
/*
 * The layers of the tree, checked on every `npm test` (test/architecture/layers.test.ts) and by `npm run deps`.
 * Imports point down this list, never up, and never in a circle:
 *
 *   apps/server               the process: composes the runtime, the HTTP edge, the hand-written routes
 *   core composition          packages/core/src/{index,boot,v1-router,internal-router,openapi,runtime,surfaces}.ts
 *   core resources            a folder per resource (accounts/, contacts/, deals/, webhooks/endpoints/, ...)
 *   core foundation           errors (and errors/, the catalogue), conflict, clock, config, random, context, trpc,
 *                             records/ (what CRM record types share), validation/, http/, limits/, auth/,
 *                             idempotency/, events/, mail/, openapi/, jobs/ (the queue runtime), webhooks/transport/,
 *                             metrics/ (the process's counters)
 *   packages/db               entities, ORM, the Db executor
 *
 * Resources may use each other (no circle); apps/ reaches core only through the package's named exports; the SDK
 * takes only types, from the package's index (the routers); the browser snippets import nothing from the server.
 * Tests may import anything and are not cruised (test/ is not followed, so an import of it from below still shows).
 * Type-only imports count: a type from an upper layer couples the lower one to it just the same.
 */
import fs from 'node:fs';
import path from 'node:path';

const FOUNDATION =
  '^packages/core/src/((errors|conflict|clock|config|random|context|trpc)\\.ts$|(errors|records|validation|http|limits|auth|idempotency|events|mail|openapi|jobs|webhooks/transport|metrics)/)';
const COMPOSITION = '^packages/core/src/(index|boot|v1-router|internal-router|openapi|runtime|surfaces)\\.ts$';
const TESTS = '(\\.test\\.ts|\\.test-support\\.ts)$';

/** The files a package.json `exports` map names, as paths from the repository root. */
function exported(pkgDir) {
  const { exports } = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, pkgDir, 'package.json'), 'utf8'));
  return Object.values(exports).map((target) => `^${path.posix.join(pkgDir, target).replace(/\./g, '\\.')}$`);
}

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A circle has no bottom: neither module can be understood, tested or moved without the other.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'packages-not-apps',
      comment: 'Packages are the libraries; the application composes them, never the reverse.',
      severity: 'error',
      from: { path: '^packages/', pathNot: TESTS },
      to: { path: '^(apps|sdk|snippets|test)/' },
    },
    {
      name: 'db-is-the-bottom',
      severity: 'error',
      from: { path: '^packages/db/' },
      to: { path: '^packages/core/' },
    },
    {
      name: 'foundation-not-resources',
      comment: 'The shared lower modules (errors, clock, validation, auth, limits, events, ...) know no resource.',
      severity: 'error',
      from: { path: FOUNDATION, pathNot: TESTS },
      to: { path: '^packages/core/src/', pathNot: [FOUNDATION, COMPOSITION] },
    },
    {
      name: 'foundation-not-composition',
      severity: 'error',
      from: { path: FOUNDATION, pathNot: TESTS },
      to: { path: COMPOSITION },
    },
    {
      name: 'resources-not-composition',
      comment: 'A resource is wired into the routers, the runtime and the documents; it never imports them.',
      severity: 'error',
      from: { path: '^packages/core/src/[^/]+/', pathNot: [FOUNDATION, TESTS] },
      to: { path: COMPOSITION },
    },
    {
      name: 'apps-through-exports',
      comment: "apps/ reaches a package only through its package.json exports, each named (no './*').",
      severity: 'error',
      from: { path: '^apps/' },
      to: { path: '^packages/(core|db)/', pathNot: [...exported('packages/core'), ...exported('packages/db')] },
    },
    {
      name: 'sdk-types-from-routers',
      comment: 'The SDK ships to browsers and other runtimes: it takes only the routers’ types from the server.',
      severity: 'error',
      from: { path: '^sdk/src/' },
      to: { path: '^(packages|apps)/', pathNot: '^packages/core/src/index\\.ts$' },
    },
    {
      name: 'sdk-only-type-imports',
      severity: 'error',
      from: { path: '^sdk/src/' },
      to: { path: '^(packages|apps)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'console-types-from-routers',
      comment: 'The console is a browser bundle: like the SDK, it takes only the routers’ types from the server.',
      severity: 'error',
      from: { path: '^apps/console/src/' },
      to: { path: '^(packages|apps/server)/', pathNot: '^packages/core/src/index\\.ts$' },
    },
    {
      name: 'console-only-type-imports',
      severity: 'error',
      from: { path: '^apps/console/src/' },
      to: { path: '^(packages|apps/server)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'snippets-import-nothing-from-the-server',
      comment: 'The browser scripts are bundled for any page: nothing of the server, the SDK or the tests goes in.',
      severity: 'error',
      from: { path: '^snippets/', pathNot: ['^snippets/build\\.ts$', '^snippets/[^/]+/test/', TESTS] },
      to: { path: '^(packages|apps|sdk|test)/' },
    },
    {
      name: 'no-tests-in-production',
      severity: 'error',
      from: { path: '^(packages|apps)/|^sdk/src/|^snippets/[^/]+/src/', pathNot: [TESTS, '^apps/console/test/'] },
      to: { path: ['^test/', '/test/', TESTS] },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Count `import type` too: the layers are about what a module knows, not only what it loads at run time.
    tsPreCompilationDeps: true,
    exclude: { path: ['(^|/)node_modules/', '^sdk/dist/', '^\\.data/', TESTS, '/test/'] },
    doNotFollow: { path: ['node_modules', '^test/'] },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default', 'types'] },
  },
};
