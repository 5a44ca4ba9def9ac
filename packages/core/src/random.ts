/**
 * Chance is a dependency, like time: whatever spreads work at random (retry jitter) draws from the Deps' source, so a
 * test can pick the draws and assert exact bounds instead of hoping for them.
 */
export interface Random {
  /** A number in [0, 1), as Math.random gives. */
  next(): number;
}

export const systemRandom: Random = { next: () => Math.random() };

/**
 * A source tests set by hand: the queued draws first, in order, then the fixed value, else Math.random. A value outside
 * [0, 1) is refused, as no real source gives one.
 */
export class TestRandom implements Random {
  private queued: number[] = [];
  private fixed: number | null = null;

  next(): number {
    return this.queued.shift() ?? this.fixed ?? Math.random();
  }

  /** Every draw returns `value` (null: back to Math.random) once the queued ones are used. */
  fix(value: number | null): void {
    if (value !== null) check(value);
    this.fixed = value;
  }

  /** The next draws, in order. */
  queue(...values: number[]): void {
    values.forEach(check);
    this.queued.push(...values);
  }

  reset(): void {
    this.queued = [];
    this.fixed = null;
  }
}

function check(value: number): void {
  if (!(value >= 0 && value < 1)) throw new RangeError(`a random draw is in [0, 1), not ${value}`);
}
