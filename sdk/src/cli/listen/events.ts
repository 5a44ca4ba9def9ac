/** The event catalogue's names for the CLI's help and checks, generated from the server's catalogue. */
import { EVENT_GROUPS, EVENT_NAMES } from '../../generated/events.ts';
import { suggest } from '../args.ts';
import { UsageError } from '../exit-codes.ts';

export const EVENTS: readonly string[] = EVENT_NAMES;

/** The events grouped as the catalogue groups them, one group a line, for `--help`. */
export function eventList(indent = '  '): string {
  return Object.entries(EVENT_GROUPS)
    .map(([group, names]) => `${indent}${`${group}:`.padEnd(12)} ${names.join(', ')}`)
    .join('\n');
}

/** A name of the catalogue, or a usage error with the closest name. */
export function checkEvent(name: string, flag: string): string {
  if (EVENTS.includes(name)) return name;
  const hint = suggest(name, [...EVENTS]);
  throw new UsageError(
    `${flag}: unknown event '${name}'${hint ? `; did you mean '${hint}'?` : ''} (see \`leadwire trigger --help\` for the list)`,
  );
}
