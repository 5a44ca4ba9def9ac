/** The exit codes of every `leadwire` command (documented in sdk/README.md and `leadwire --help`). */
export const ExitCode = {
  ok: 0,
  /** The command finished, but some rows or deliveries failed. */
  partial: 1,
  /** Bad flag, missing argument or unreadable file. */
  usage: 2,
  /** No key, or the server refused it (401, 403). */
  auth: 3,
  /** The server or the network failed after the client's retries. */
  server: 4,
  /** SIGINT: what was in flight finished and the state was saved. */
  interrupted: 130,
} as const;

/** An error a command reports as one message on stderr and an exit code, with no stack trace. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A bad invocation: main.ts prints the message and the command's usage, and exits 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(ExitCode.usage, message);
    this.name = 'UsageError';
  }
}

/** The key type each surface needs, for messages naming the right one. */
export type KeyKind = 'public' | 'internal';

const KEY_NAMES: Record<KeyKind, string> = { public: 'a Public API key', internal: 'an Internal key' };

/**
 * Turns an API failure (a LeadwireError, or anything with `status` and `code`) into a CliError with the right exit code
 * and a message that says what to do. `kind` is the key type the command needs.
 */
export function cliErrorOf(err: unknown, kind: KeyKind): CliError {
  if (err instanceof CliError) return err;
  const e = err as { status?: unknown; code?: unknown; message?: unknown; required?: unknown };
  if (typeof e?.status !== 'number') return new CliError(ExitCode.server, `unexpected failure: ${String(err)}`, { cause: err });
  const detail = typeof e.message === 'string' ? e.message : String(e.code);
  if (e.status === 401) {
    return new CliError(
      ExitCode.auth,
      `the server refused the API key (401 ${String(e.code)}): it is unknown, revoked or expired; run \`leadwire login\` with a valid key`,
      { cause: err },
    );
  }
  if (e.status === 403 && e.code === 'wrong_api_surface') {
    const other = kind === 'public' ? 'an Internal key' : 'a Public API key';
    return new CliError(ExitCode.auth, `this command needs ${KEY_NAMES[kind]}, and the key given is ${other} (403 wrong_api_surface)`, {
      cause: err,
    });
  }
  if (e.status === 403 && e.code === 'insufficient_scope') {
    return new CliError(
      ExitCode.auth,
      `the API key lacks the permission ${typeof e.required === 'string' ? e.required : 'needed'} (403 insufficient_scope): create a key that has it`,
      { cause: err },
    );
  }
  if (e.status === 401 || e.status === 403)
    return new CliError(ExitCode.auth, `refused (${e.status} ${String(e.code)}): ${detail}`, { cause: err });
  if (e.status === 0) return new CliError(ExitCode.server, `could not reach the server (${String(e.code)}): ${detail}`, { cause: err });
  return new CliError(ExitCode.server, `the server answered ${e.status} ${String(e.code)}: ${detail}`, { cause: err });
}
