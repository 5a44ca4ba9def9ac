/**
 * Sets `key` in a map used as a bounded LRU table: insertion order is the LRU order, so the entry moves to the back,
 * and the oldest go first once the map holds more than `max`. The in-memory tables that traffic fills (key guard,
 * address budgets, refusal pacing) all grow through here, so no flood can grow memory past their bounds.
 */
export function putBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as K);
}
