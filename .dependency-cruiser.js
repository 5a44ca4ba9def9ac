// @ts-check
/*
 * The layers of the tree, checked on every `npm test` (test/architecture/layers.test.ts) and by `npm run deps`. The
 * building, each folder above everything it imports (packages/core/src folded to its first folders; a top-level file
 * is a folder of its own name). `node test/architecture/count-folders.ts` prints it from the tree:
 *
 *   apps/server  apps/console  apps/cli  sdk              the process, the browser bundle, the command line, the SDK
 *   ---------------------------------------------------------------------------------------------------------------
 *   composition   index, openapi/ (both documents) > runtime, internal-router > surfaces > v1-router; boot
 *   resources     workflows > automation, capture > forms, leads, messages, deals, tasks, bookings, ai-actions
 *                 > contacts, tracking, webhooks (endpoints, delivery, listen), api-keys
 *                 > companies, accounts, feed, files, notes, nonprofit, pipelines
 *   services      auth, mail > events, jobs > http, idempotency, replicas > trpc > limits > records, metrics; scoring;
 *                 webhooks/transport (signing, sending, the address rules), a folder inside webhooks/
 *   floor         context (the dependencies' shapes), conflict > errors (errors.ts, errors/), validation, clock,
 *                 config, random
 *   packages/db   entities, the ORM, typed statements and the Db executor
 *
 * Imports point down, never up, never in a circle; and folded to folders, no two folders import each other and no
 * folders form a loop (layers.test.ts folds the cruise result, since dependency-cruiser judges modules, not folders;
 * its exceptions, none today and at most 5, each have their reason in docs/architecture.md). The floor imports only
 * the floor; the services know no resource; a resource never imports the composition. apps/ reaches core only through
 * the package's named exports; the SDK and the console take only types, from the package's index (the routers); the
 * browser snippets import nothing from the server. Tests may import anything and are not cruised (test/ is not
 * followed, so an import of it from below still shows). Type-only imports count: a type from an upper layer couples
 * the lower one to it just the same.
 */
import fs from 'node:fs';
import path from 'node:path';

const CORE = '^packages/core/src/';
/** What every module stands on: these import only each other and packages/db. */
const FLOOR = `${CORE}((clock|random|config|errors|conflict|context)\\.ts$|(errors|validation)/)`;
/** The shared services every resource uses: they know no resource. */
const SERVICES = `${CORE}(trpc\\.ts$|(records|http|metrics|limits|idempotency|events|auth|jobs|mail|scoring|replicas|webhooks/transport)/)`;
/** What wires the resources into routers, documents and the runtime: the package's exports. */
const COMPOSITION = `${CORE}((index|boot|v1-router|internal-router|runtime|surfaces)\\.ts$|openapi/)`;
const TESTS = '(\\.test\\.ts|\\.test-support\\.ts)$';

/**
 * The files a package.json `exports` map names, as paths from the repository root.
 * @param {string} pkgDir
 */
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
      name: 'the-floor-imports-only-the-floor',
      comment: 'errors, context, clock, config, random, validation: what everything stands on stands on nothing above it.',
      severity: 'error',
      from: { path: FLOOR, pathNot: TESTS },
      to: { path: CORE, pathNot: FLOOR },
    },
    {
      name: 'services-not-resources',
      comment: 'The shared services (auth, events, jobs, limits, ...) know no resource and no composition file.',
      severity: 'error',
      from: { path: SERVICES, pathNot: TESTS },
      to: { path: CORE, pathNot: [FLOOR, SERVICES] },
    },
    {
      name: 'resources-not-composition',
      comment: 'A resource is wired into the routers, the runtime and the documents; it never imports them.',
      severity: 'error',
      from: { path: CORE, pathNot: [FLOOR, SERVICES, COMPOSITION, TESTS] },
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
      name: 'sdk-nothing-from-server',
      comment:
        'The SDK ships to browsers and other runtimes: it imports nothing of the server. The routers’ types reach it generated (sdk/src/generated/internal-router.ts, held to the router by sdk/test/internal-router.test-d.ts).',
      severity: 'error',
      from: { path: '^sdk/src/' },
      to: { path: '^(packages|apps)/' },
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
