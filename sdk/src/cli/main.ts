#!/usr/bin/env node
/**
 * The `leadwire` command line. `run(argv, ctx)` does everything and returns the exit code, so tests call it in-process;
 * when this file is the process's entry point, the wrapper at the bottom builds the real context and exits with it.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pkg from '../../package.json' with { type: 'json' };
import { suggest, wantsHelp } from './args.ts';
import { eventsCommand } from './commands/events.ts';
import { exportCommand } from './commands/export.ts';
import { importCommand } from './commands/import.ts';
import { listenCommand } from './commands/listen.ts';
import { helpCommand, topLevelUsage } from './commands/help.ts';
import { loginCommand } from './commands/login.ts';
import { logoutCommand } from './commands/logout.ts';
import { triggerCommand } from './commands/trigger.ts';
import { configDirOf } from './config.ts';
import type { CliContext, Command } from './context.ts';
import { CliError, ExitCode, UsageError } from './exit-codes.ts';
import { messages } from './output.ts';

export type { CliContext, Command } from './context.ts';

const COMMANDS: Command[] = [loginCommand, logoutCommand, importCommand, exportCommand, eventsCommand, listenCommand, triggerCommand];
const ALL: Command[] = [...COMMANDS, helpCommand(() => ALL)];

/** Runs `leadwire <argv>` and returns the exit code; never throws. */
export async function run(argv: string[], ctx: CliContext): Promise<number> {
  const say = messages(ctx);
  const [first, ...rest] = argv;
  if (first === undefined) {
    ctx.stderr.write(topLevelUsage(ALL));
    return ExitCode.usage;
  }
  if (first === '--help' || first === '-h') {
    ctx.stdout.write(topLevelUsage(ALL));
    return ExitCode.ok;
  }
  if (first === '--version' || first === '-v') {
    ctx.stdout.write(`${pkg.version}\n`);
    return ExitCode.ok;
  }
  const command = ALL.find((c) => c.name === first);
  if (!command) {
    const hint = first.startsWith('-')
      ? undefined
      : suggest(
          first,
          ALL.map((c) => c.name),
        );
    say.error(`unknown ${first.startsWith('-') ? 'option' : 'command'} '${first}'${hint ? `; did you mean '${hint}'?` : ''}`);
    ctx.stderr.write('Run `leadwire --help` for the list of commands.\n');
    return ExitCode.usage;
  }
  if (wantsHelp(rest)) {
    ctx.stdout.write(command.usage);
    return ExitCode.ok;
  }
  try {
    return await command.run(ctx, rest);
  } catch (err) {
    if (err instanceof UsageError) {
      say.error(err.message);
      ctx.stderr.write(`\n${command.usage}`);
      return ExitCode.usage;
    }
    if (err instanceof CliError) {
      say.error(err.message);
      return err.exitCode;
    }
    say.error(`unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return ExitCode.server;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    // npm links a bin through a symlink: compare real paths.
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/**
 * The process's command line, with the real context; sets process.exitCode. Called below when this file is the entry
 * point (the published bundle, `node sdk/src/cli/main.ts`), and by apps/cli/leadwire.ts, the checkout's `npx leadwire`.
 */
export async function main(): Promise<void> {
  const controller = new AbortController();
  const onSigint = () => {
    // A second Ctrl-C means "now": skip the orderly finish of the in-flight work.
    if (controller.signal.aborted) process.exit(ExitCode.interrupted);
    process.stderr.write('\nInterrupted: finishing what is in flight (Ctrl-C again to quit at once)…\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  const env = { ...process.env };
  process.exitCode = await run(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env,
    cwd: process.cwd(),
    configDir: configDirOf(env),
    isTTY: process.stderr.isTTY === true,
    fetch: globalThis.fetch,
    signal: controller.signal,
  });
  process.off('SIGINT', onSigint);
}

if (isEntryPoint()) await main();
