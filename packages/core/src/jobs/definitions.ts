import type { Deps } from '../context.ts';
import type { JobDefinition } from './boss.ts';

/** Every queue the application runs. */
export function jobDefinitions(_deps: Deps): JobDefinition[] {
  return [];
}
