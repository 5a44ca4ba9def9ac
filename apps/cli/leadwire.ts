#!/usr/bin/env node
// `npx leadwire` in this checkout (npm ci links this workspace's bin into node_modules/.bin): the command line's
// TypeScript source as it is, no build, on the Node 24 that npx finds first on its PATH (node_modules/.bin/node). The
// published package runs the same main() from its bundle, sdk/dist/cli.js.
import { main } from '../../sdk/src/cli/main.ts';

await main();
