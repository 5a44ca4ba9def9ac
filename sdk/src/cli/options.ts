/**
 * What the commands share on their command lines: parsing (node:util parseArgs, failures as usage errors), the
 * --api-key and --base-url every command that calls the server takes, --page-size of the paged ones, and their help.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { usageErrors } from './args.ts';
import { resolveCredentials } from './config.ts';
import type { CliContext } from './context.ts';
import { type KeyKind, UsageError } from './exit-codes.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** --api-key and --base-url. */
export const CONNECTION_OPTIONS = { 'api-key': { type: 'string' }, 'base-url': { type: 'string' } } as const satisfies Options;

/** --page-size of the commands that read the API page by page. */
export const PAGE_SIZE_OPTION = { 'page-size': { type: 'string' } } as const satisfies Options;

/** A command's options and --api-key/--base-url parsed from `args`, positionals allowed; a bad one is a UsageError. */
export function parseCommand<const O extends Options>(args: string[], options: O) {
  return usageErrors(() => parseArgs({ args, options: { ...options, ...CONNECTION_OPTIONS }, allowPositionals: true }));
}

/** The key and API root a command uses: its --api-key and --base-url, else the environment, else the saved ones. */
export const connectionOf = (
  ctx: Pick<CliContext, 'env' | 'configDir'>,
  values: { 'api-key'?: string | undefined; 'base-url'?: string | undefined },
  kind: KeyKind,
) => resolveCredentials(ctx, { apiKey: values['api-key'], baseUrl: values['base-url'] }, kind);

/** --page-size: a whole number from 1 to 100, default 100 (the API's page limit). */
export function pageSizeOf(values: { 'page-size'?: string | undefined }): number {
  const pageSize = Number(values['page-size'] ?? 100);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
    throw new UsageError('--page-size must be a whole number from 1 to 100');
  return pageSize;
}

const KEY_WORDS: Record<KeyKind, string> = { public: 'a Public API key', internal: 'an Internal key' };

/** The help lines of --api-key, --base-url and --help, their descriptions starting at column `at`. */
export function connectionUsage(kind: KeyKind, at: number): string {
  const line = (flag: string, text: string) => `  ${flag.padEnd(at - 2)}${text}`;
  return [
    line('--api-key <key>', `${KEY_WORDS[kind]} (default LEADWIRE_API_KEY, then \`leadwire login\`)`),
    line('--base-url <url>', "the server's API root (default LEADWIRE_BASE_URL, then the saved one)"),
    line('-h, --help', 'show this help'),
  ].join('\n');
}
