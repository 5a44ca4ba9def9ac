/** Argument helpers over node:util parseArgs (no dependency): every parsing failure becomes a UsageError (exit 2). */
import { UsageError } from './exit-codes.ts';

/** Runs a parseArgs call, turning its TypeError (unknown option, missing value) into a UsageError. */
export function usageErrors<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // parseArgs appends a long hint about '--' to unknown options; the first sentence is the useful part.
    const message = err instanceof Error ? err.message.split('. To specify a positional')[0]! : String(err);
    throw new UsageError(message);
  }
}

/** Checks the number of positional arguments, naming what is missing or extra. */
export function positionals(values: string[], names: string[], optional = 0): string[] {
  const required = names.length - optional;
  if (values.length < required) throw new UsageError(`missing argument: ${names[values.length]!}`);
  if (values.length > names.length) throw new UsageError(`unexpected argument: ${values[names.length]!}`);
  return values;
}

/** Whether the arguments ask for help: `--help` or `-h` anywhere before a `--`. */
export function wantsHelp(argv: string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/** A known name within two edits of `input` (or starting with it), for "did you mean" hints. */
export function suggest(input: string, names: string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = name.startsWith(input) && input.length > 0 ? 1 : editDistance(input, name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** `--forward-to`: the local receiver's http(s) URL, normalised. */
export function forwardUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--forward-to must be an http(s) URL such as http://localhost:4000/hook, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--forward-to must use http or https, got ${url.protocol}`);
  return url.href;
}
