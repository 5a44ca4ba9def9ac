import type { Command } from '../context.ts';
import { ExitCode } from '../exit-codes.ts';

/** The `leadwire --help` text for a list of commands. */
export function topLevelUsage(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `leadwire: the Leadwire command line

Usage: leadwire <command> [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Options:
  -h, --help     show help; \`leadwire <command> --help\` shows a command's options
  -v, --version  print the version

API key: --api-key, else LEADWIRE_API_KEY, else the key saved by \`leadwire login\` in
  $LEADWIRE_CONFIG_DIR, $XDG_CONFIG_HOME/leadwire or ~/.config/leadwire (config.json, mode 0600).
Server: --base-url, else LEADWIRE_BASE_URL, else the one saved by \`leadwire login\`,
  else http://localhost:3000/api.

Exit codes:
  0    success
  1    finished, but some rows or deliveries failed
  2    usage error (bad flag, missing argument, unreadable file)
  3    authentication or permission error (no key, 401, 403)
  4    server or network error after retries, or an unexpected failure
  130  interrupted (Ctrl-C); what was in flight finished and progress was saved
`;
}

/** `leadwire help [command]`: the same texts as --help. */
export function helpCommand(commands: () => Command[]): Command {
  return {
    name: 'help',
    summary: 'show help for leadwire or one command',
    usage: 'Usage: leadwire help [command]\n\nShows the help of leadwire, or of one command (the same as `leadwire <command> --help`).\n',
    async run(ctx, argv) {
      const [name, ...rest] = argv;
      if (rest.length > 0) {
        ctx.stderr.write(`error: unexpected argument: ${rest[0]!}\n`);
        return ExitCode.usage;
      }
      if (name === undefined) {
        ctx.stdout.write(topLevelUsage(commands()));
        return ExitCode.ok;
      }
      const command = commands().find((c) => c.name === name);
      if (!command) {
        ctx.stderr.write(`error: unknown command '${name}'; run \`leadwire --help\` for the list\n`);
        return ExitCode.usage;
      }
      ctx.stdout.write(command.usage);
      return ExitCode.ok;
    },
  };
}
