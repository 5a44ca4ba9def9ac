/** What a command may touch: everything a test can replace, so commands run in-process as well as in a real process. */
export interface CliContext {
  /** Machine output (results): what a script pipes on. */
  stdout: { write(chunk: string): unknown };
  /** Human output: messages, warnings, progress. */
  stderr: { write(chunk: string): unknown };
  env: Record<string, string | undefined>;
  /** Relative paths in arguments are resolved against it. */
  cwd: string;
  /** Where `leadwire login` keeps its config.json (see configDirOf). */
  configDir: string;
  /** Whether stderr is a terminal: progress redraws in place and colours are allowed only then. */
  isTTY: boolean;
  fetch: typeof fetch;
  /** Aborted on SIGINT: a command finishes what is in flight, saves its state and returns 130. */
  signal: AbortSignal;
  /**
   * How a command waits (polling, backoff, the client's retries): resolves after `ms`, or early when `signal` aborts.
   * Default: a timer. Tests pass their own, so that none waits on wall time.
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The clock, in milliseconds since the epoch, for rates and signature timestamps. Default: `Date.now`. */
  now?: () => number;
  /** Standard input, for `leadwire login` reading a key from a pipe or prompting on a terminal; absent in most tests. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
}

/** One `leadwire <name>` command: main.ts lists the modules that export one. */
export interface Command {
  name: string;
  /** One line for `leadwire --help`. */
  summary: string;
  /** The full `leadwire <name> --help` text, also printed after a usage error. */
  usage: string;
  /** Returns the process exit code (exit-codes.ts). */
  run(ctx: CliContext, argv: string[]): Promise<number>;
}
