import { parseArgs } from 'node:util';
import { positionals, usageErrors } from '../args.ts';
import { configPathOf, readConfig, removeConfig, writeConfig } from '../config.ts';
import type { Command } from '../context.ts';
import { ExitCode, UsageError } from '../exit-codes.ts';
import { messages } from '../output.ts';

export const logoutCommand: Command = {
  name: 'logout',
  summary: 'remove the keys saved by `leadwire login`',
  usage: `Usage: leadwire logout [--kind public|internal]

Removes the saved keys (both, or only the Public or the Internal one). The keys themselves stay valid
on the server: revoke them there if they leaked.

Options:
  --kind <kind>  remove only this one: public or internal
  -h, --help     show this help
`,
  async run(ctx, argv) {
    const { values, positionals: rest } = usageErrors(() =>
      parseArgs({ args: argv, options: { kind: { type: 'string' } }, allowPositionals: true }),
    );
    positionals(rest, []);
    const say = messages(ctx);
    const path = configPathOf(ctx.configDir);
    if (values.kind === undefined) {
      say.info((await removeConfig(ctx.configDir)) ? `Removed the saved keys (${path}).` : 'No saved keys.');
      return ExitCode.ok;
    }
    if (values.kind !== 'public' && values.kind !== 'internal')
      throw new UsageError(`--kind must be public or internal, got ${JSON.stringify(values.kind)}`);
    const config = await readConfig(ctx.configDir);
    if (!config.keys[values.kind]) {
      say.info(`No saved ${values.kind} key.`);
      return ExitCode.ok;
    }
    delete config.keys[values.kind];
    await writeConfig(ctx.configDir, config);
    say.info(`Removed the saved ${values.kind} key (${path}).`);
    return ExitCode.ok;
  },
};
