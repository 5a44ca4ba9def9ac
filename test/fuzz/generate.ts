/**
 * A small request generator driven by the OpenAPI documents' JSON Schemas (the subset zod-openapi emits: $ref, type,
 * anyOf/oneOf/allOf, enum/const, string lengths, formats and patterns, number ranges, arrays, objects and records).
 * It makes valid inputs, boundary inputs (every length and range at its limit) and hostile mutations of them. Written
 * here rather than taken from a package: it needs only this subset, a seeded random source, and mutations aimed at
 * what PostgreSQL refuses (NUL, lone surrogates, int overflow), which general-purpose fakers do not produce.
 */

export type Schema = Record<string, any>;

/** mulberry32: tiny, fast and fully determined by its seed. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Rng = ReturnType<typeof rng>;

export const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  "'; drop table contacts; --",
  '%00',
  '\\u0000',
  '😀'.repeat(3),
  ' ',
  '\u202e',
  'null',
  '{}',
];
export const HOSTILE_NUMBERS = [-1, 0, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e308, -1e308, 0.5, 1e-9, Number.MAX_SAFE_INTEGER + 2];

export class Generator {
  private readonly components: Record<string, Schema>;
  private readonly r: Rng;
  /** Real ids to use for uuid fields some of the time, so requests reach records and not only not_found. */
  private readonly ids: readonly string[];

  constructor(components: Record<string, Schema>, r: Rng, ids: readonly string[]) {
    this.components = components;
    this.r = r;
    this.ids = ids;
  }

  resolve(s: Schema | undefined): Schema {
    let schema = s ?? {};
    for (let i = 0; i < 10 && schema.$ref; i++) schema = this.components[String(schema.$ref).split('/').pop()!] ?? {};
    return schema;
  }

  private text(s: Schema, boundary: boolean): string {
    if (s.format === 'uuid') return this.ids.length && this.r.chance(0.6) ? this.r.pick(this.ids) : crypto.randomUUID();
    if (s.format === 'email') return `fuzz${this.r.int(0, 1e6)}@example.com`;
    if (s.format === 'date-time') return new Date(Date.UTC(2026, this.r.int(0, 11), this.r.int(1, 28), this.r.int(0, 23))).toISOString();
    if (s.pattern === '^[A-Za-z0-9._-]{1,40}$' || s.pattern?.includes('[a-z0-9_.-]')) return `src-${this.r.int(0, 999)}`;
    if (s.pattern === '^[A-Z]{3}$' || s.pattern?.includes('A-Z]{3}')) return this.r.pick(['USD', 'EUR', 'GBP']);
    if (s.example !== undefined && typeof s.example === 'string' && this.r.chance(0.5)) return s.example;
    const min = s.minLength ?? 0;
    const max = Math.min(s.maxLength ?? 60, boundary ? 100_000 : 60);
    const len = boundary ? this.r.pick([min, max]) : this.r.int(Math.max(min, 1), Math.max(min, Math.min(max, 24)));
    const alphabet = 'abcdefghijklmnopqrstuvwxyzÄÖüé 0123456789';
    let out = '';
    for (let i = 0; i < len; i++) out += alphabet[this.r.int(0, alphabet.length - 1)];
    return len > 0 ? out.replace(/^ | $/g, 'x') : out;
  }

  private number(s: Schema, boundary: boolean): number {
    const integer = s.type === 'integer';
    const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : integer ? 0 : -1000);
    const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : lo + 1000);
    if (boundary) return this.r.pick([lo, hi]);
    const v = lo + this.r.next() * Math.min(hi - lo, 1e6);
    return integer ? Math.floor(v) : v;
  }

  /** A value that should satisfy `schema`. `boundary` takes limits instead of middles. */
  value(schema: Schema | undefined, boundary = false, depth = 0): unknown {
    const s = this.resolve(schema);
    if (s.const !== undefined) return s.const;
    if (s.enum) return this.r.pick(s.enum);
    if (s.allOf) return Object.assign({}, ...s.allOf.map((x: Schema) => this.value(x, boundary, depth)));
    const branches = s.anyOf ?? s.oneOf;
    if (branches) {
      const nonNull = branches.filter((b: Schema) => this.resolve(b).type !== 'null');
      return this.value(this.r.chance(0.85) && nonNull.length ? this.r.pick(nonNull) : this.r.pick(branches), boundary, depth);
    }
    const type = Array.isArray(s.type) ? this.r.pick(s.type) : s.type;
    switch (type) {
      case 'string':
        return this.text(s, boundary);
      case 'integer':
      case 'number':
        return this.number(s, boundary);
      case 'boolean':
        return this.r.chance(0.5);
      case 'null':
        return null;
      case 'array': {
        const min = s.minItems ?? 0;
        const max = Math.min(s.maxItems ?? 5, boundary ? 100 : 5);
        const n = boundary ? this.r.pick([min, max]) : this.r.int(min, Math.max(min, max));
        // Arrays of ids must not repeat one (merge and reorder refuse that, rightly).
        const items = Array.from({ length: n }, () => this.value(s.items, boundary, depth + 1));
        return this.resolve(s.items).format === 'uuid' ? items.map(() => crypto.randomUUID()) : items;
      }
      default:
        return this.object(s, boundary, depth);
    }
  }

  private object(s: Schema, boundary: boolean, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const required = new Set<string>(s.required ?? []);
    for (const [name, prop] of Object.entries<Schema>(s.properties ?? {})) {
      if (required.has(name) || this.r.chance(boundary ? 0.9 : 0.6)) out[name] = this.value(prop, boundary, depth + 1);
    }
    if (s.additionalProperties && typeof s.additionalProperties === 'object' && depth < 3) {
      for (let i = this.r.int(0, 3); i > 0; i--) out[`k${this.r.int(0, 99)}`] = this.r.pick(['v', 1, true, null, { n: 'x' }, ['a']]);
    }
    return out;
  }

  /** Something of the wrong type, or absurd, for any field. */
  wrong(): unknown {
    return this.r.pick<unknown>([
      this.r.pick(HOSTILE_STRINGS),
      this.r.pick(HOSTILE_NUMBERS),
      'x'.repeat(this.r.pick([257, 2049, 10_001, 100_001])),
      true,
      null,
      [],
      [1, 'a', null],
      {},
      { __proto__: null, nested: { deeper: [1, { x: '\u0000' }] } },
      JSON.parse('{"__proto__":{"polluted":1}}'),
      nest(this.r.int(5, 60)),
    ]);
  }

  /** The properties that take text (or a free-form object), where NUL and lone surrogates are worth sending. */
  private textual(s: Schema): string[] {
    const takesText = (p: Schema): boolean => {
      const r = this.resolve(p);
      if (r.type === 'string' && !r.enum && !r.format) return true;
      if (r.type === 'object' && r.additionalProperties) return true;
      if (r.type === 'array') return takesText(r.items ?? {});
      return (r.anyOf ?? r.oneOf ?? []).some(takesText);
    };
    return Object.entries<Schema>(s.properties ?? {})
      .filter(([, p]) => takesText(p))
      .map(([n]) => n);
  }

  /** A hostile variant of a valid object body: text poisoned, one field broken, one missing, unknown fields, or a different shape. */
  mutate(valid: Record<string, unknown>, schema: Schema): unknown {
    const s = this.resolve(schema);
    const names = Object.keys(s.properties ?? {});
    const textual = this.textual(s);
    const copy: Record<string, unknown> = { ...valid };
    const bad = () => this.r.pick(HOSTILE_STRINGS.slice(0, 5));
    switch (this.r.int(0, 9)) {
      case 0:
      case 1:
      case 2:
      case 3:
        if (textual.length) {
          const name = this.r.pick(textual);
          const p = this.resolve(s.properties[name]);
          copy[name] =
            p.type === 'object' ? { [this.r.chance(0.5) ? `k${bad()}` : 'k']: { nested: [bad()] } } : p.type === 'array' ? [bad()] : bad();
        }
        return copy;
      case 4:
      case 5:
        if (names.length) copy[this.r.pick(names)] = this.wrong();
        return copy;
      case 6: {
        const required: string[] = s.required ?? [];
        if (required.length) delete copy[this.r.pick(required)];
        return copy;
      }
      case 7:
        copy[`unknown_${this.r.int(0, 9)}`] = this.wrong();
        return copy;
      case 8:
        return this.r.pick<unknown>([null, [], [valid], 'text', 42, true, nest(70)]);
      default:
        for (const n of names) if (this.r.chance(0.5)) copy[n] = this.wrong();
        return copy;
    }
  }
}

/** `{"a":{"a":...}}` nested `depth` levels. */
export function nest(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}
