/**
 * The contract check: what changed between two OpenAPI documents, classified by api-smart-diff, and whether the
 * CHANGELOG's Unreleased section names every change a client can notice. Pure: the test and the snapshot script
 * (`npm run openapi:snapshot`) both call it.
 */
import { isDeepStrictEqual } from 'node:util';
import { apiCompare } from 'api-smart-diff';

type Json = any;

export type ChangeKind = 'breaking' | 'non-breaking' | 'deprecated';

export interface ContractChange {
  kind: ChangeKind;
  /** Where it is: `GET /contacts/{id}`, `components/schemas/ContactRecord` or `webhooks/contact.created`. */
  where: string;
  /** api-smart-diff's own words. */
  description: string;
  /** What a CHANGELOG line must name, each in backticks, all in the same line (a breaking one also says **Breaking**). */
  names: string[];
}

/** JSON Schema and OpenAPI keywords: never the name of the thing changed, only the way it changed. */
const KEYWORDS = new Set([
  'paths',
  'components',
  'schemas',
  'schema',
  'properties',
  'items',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'additionalProperties',
  'propertyNames',
  'content',
  'application/json',
  'requestBody',
  'responses',
  'parameters',
  'headers',
  'type',
  'format',
  'pattern',
  'enum',
  'const',
  'required',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'default',
  'nullable',
  'deprecated',
  'security',
  'webhooks',
  'post',
  'get',
  'put',
  'patch',
  'delete',
]);
const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options']);
/** Words for people: api-smart-diff leaves some unclassified (a shared response's description, an example added). */
const ANNOTATIONS = new Set(['description', 'summary', 'example', 'examples', 'title', 'externalDocs', '$comment']);

/** A keyword (not a property of that name: a webhook endpoint has a `description` field) somewhere on the path. */
const keywordOnPath = (path: readonly (string | number)[], test: (seg: string) => boolean) =>
  path.some((seg, i) => typeof seg === 'string' && test(seg) && path[i - 1] !== 'properties');
const isAnnotation = (path: readonly (string | number)[]) => keywordOnPath(path, (seg) => ANNOTATIONS.has(seg));
/**
 * Our `x-` extensions (`x-error-codes`: the codes an operation documents) say what clients may meet, not what they
 * must send or can parse: a change there is one to list, never a breaking one. New codes come with new conditions.
 */
const isExtension = (path: readonly (string | number)[]) => keywordOnPath(path, (seg) => seg.startsWith('x-'));

/**
 * A value added to an enum, with none removed. In what a client sends it widens the input (the tool agrees). In what
 * it receives (an error `code`, the feed's `event`, a delivery's `outcome`, the `X-Webhook-Event` header of a
 * delivery), the policy lists new error codes and new events as additive, and clients must accept a value they do not
 * know (docs/versioning.md); the tool judges the same addition breaking at one place and non-breaking at another
 * (at an operation and at the component it refers to). A change to list, not a breaking one.
 */
const isAddedEnumValue = (d: { action: string; path: readonly (string | number)[] }) => d.action === 'add' && d.path.at(-2) === 'enum';
/** A new webhook (an event the server may now send) is a new operation; the tool leaves it unclassified. */
const isAddedWebhook = (d: { action: string; path: readonly (string | number)[] }) =>
  d.action === 'add' && d.path.length === 2 && d.path[0] === 'webhooks';

const at = (doc: Json, path: readonly (string | number)[]): Json => path.reduce((node, k) => (node == null ? undefined : node[k]), doc);

/** A parameter object, its `$ref` into components.parameters followed. */
function parameterAt(doc: Json, path: readonly (string | number)[]): Json {
  const p = at(doc, path);
  if (p?.$ref) return at(doc, String(p.$ref).replace(/^#\//, '').split('/'));
  return p;
}

/** What names a change: the operation, parameter, property, status, header or enum value it is about. */
function namesOf(path: readonly (string | number)[], before: Json, after: Json, diff: { before?: unknown; after?: unknown }): string[] {
  const op = path[0] === 'paths' && METHODS.has(String(path[2])) ? `${String(path[2]).toUpperCase()} ${String(path[1])}` : undefined;
  if (op && path.length <= 3) return [op];
  if (path[0] === 'paths' && path.length === 2) return [String(path[1])];
  const last = path.at(-1);
  const parent = path.at(-2);
  // An enum value or a required field: the value itself (the one removed, or the one added).
  if (parent === 'enum' || parent === 'required') return [String(diff.before ?? diff.after)];
  if (op && parent === 'responses') return [op, String(last)];
  if (op && path[3] === 'security') return [op];
  // The nearest named thing above the change: a property, a header, a parameter, a status, a schema, a webhook.
  for (let i = path.length - 1; i >= 0; i--) {
    const seg = path[i];
    const above = path[i - 1];
    if (above === 'properties' || above === 'headers' || above === 'schemas' || above === 'webhooks') return [String(seg)];
    if (above === 'parameters' && typeof seg === 'number') {
      const p = parameterAt(before, path.slice(0, i + 1)) ?? parameterAt(after, path.slice(0, i + 1));
      if (p?.name) return [String(p.name)];
    }
    if (above === 'responses' && op) return [op, String(seg)];
  }
  const named = [...path].reverse().find((s) => typeof s === 'string' && !KEYWORDS.has(s));
  return [String(op ?? named ?? path.join('/'))];
}

function whereOf(path: readonly (string | number)[]): string {
  if (path[0] === 'paths' && METHODS.has(String(path[2]))) return `${String(path[2]).toUpperCase()} ${String(path[1])}`;
  return path.slice(0, 3).join('/');
}

/**
 * An enum is a set: its order means nothing to a client. api-smart-diff compares some enums (a parameter's) place by
 * place, so a value inserted mid-list read as every later value replaced, each a breaking change it is not. Here the
 * values `after` shares with `before` at the same place in the document take `before`'s order and the new ones follow,
 * so only values really added or removed are changes.
 */
function alignEnums(before: Json, after: Json): void {
  if (before === null || after === null || typeof before !== 'object' || typeof after !== 'object') return;
  for (const key of Object.keys(after)) {
    const [b, a] = [before[key], after[key]];
    if (key === 'enum' && Array.isArray(b) && Array.isArray(a)) {
      const kept = b.filter((v: unknown) => a.some((w: unknown) => isDeepStrictEqual(v, w)));
      after[key] = [...kept, ...a.filter((w: unknown) => !kept.some((v: unknown) => isDeepStrictEqual(v, w)))];
    } else alignEnums(b, a);
  }
}

/**
 * Every change a client can notice from `before` to `after`, most severe kind first; descriptions and examples
 * (api-smart-diff's `annotation`, and the ones it leaves unclassified) are left out. Two judgements are stricter
 * than the tool's: any other change it cannot classify (`unclassified`, e.g. a `$ref` pointed elsewhere) is breaking,
 * and so is any changed `type`, since it judges a query parameter's string narrowed to integer as non-breaking. Three
 * follow the policy where the tool is inconsistent or silent: an enum's order is no change (`alignEnums`), a value
 * added to an enum is not breaking (`isAddedEnumValue`), nor is a new webhook (`isAddedWebhook`).
 */
export function contractChanges(before: Json, after: Json): ContractChange[] {
  // The usual case, and a diff of the internal document costs seconds.
  if (isDeepStrictEqual(before, after)) return [];
  // The document's tag list is compared by name, not by position: the tags are sorted, so a new one shifts those after
  // it, which api-smart-diff reads as each of them renamed (unclassified, so breaking). A tag removed is breaking (a
  // generated client's class of operations goes), a tag added is not.
  const seen = new Map<string, ContractChange>();
  const tagNames = (doc: Json): string[] => (Array.isArray(doc?.tags) ? doc.tags.map((t: Json) => String(t?.name)) : []);
  const [tagsBefore, tagsAfter] = [tagNames(before), tagNames(after)];
  for (const name of tagsBefore.filter((n) => !tagsAfter.includes(n)))
    seen.set(`breaking ${name}`, { kind: 'breaking', where: 'tags', description: `[Removed] tag ${name}`, names: [name] });
  for (const name of tagsAfter.filter((n) => !tagsBefore.includes(n)))
    seen.set(`non-breaking ${name}`, { kind: 'non-breaking', where: 'tags', description: `[Added] tag ${name}`, names: [name] });
  // Copies: api-smart-diff writes into the documents it compares (a description copied into each branch of an anyOf).
  const withoutTags = (doc: Json): Json => {
    const { tags: _tags, ...rest } = structuredClone(doc);
    return rest;
  };
  const [base, copy] = [withoutTags(before), withoutTags(after)];
  alignEnums(base, copy);
  const { diffs } = apiCompare(base, copy);
  for (const d of diffs) {
    const path = d.path;
    if (d.type === 'annotation' || isAnnotation(path)) continue;
    const kind: ChangeKind =
      d.type === 'deprecated'
        ? 'deprecated'
        : isExtension(path) || isAddedEnumValue(d) || isAddedWebhook(d)
          ? 'non-breaking'
          : d.type === 'unclassified' || d.type === 'breaking' || (d.action === 'replace' && path.at(-1) === 'type')
            ? 'breaking'
            : 'non-breaking';
    const change: ContractChange = {
      kind,
      where: whereOf(path),
      description: d.description?.trim() || `${d.action} ${path.join('/')}`,
      names: namesOf(path, before, after, d),
    };
    // One change shows at its component and at every operation using it: one line per kind and name is enough.
    const key = `${kind} ${change.names.join(' ')}`;
    const prev = seen.get(key);
    if (!prev || (prev.where.startsWith('components') && !change.where.startsWith('components'))) seen.set(key, change);
  }
  const order: ChangeKind[] = ['breaking', 'deprecated', 'non-breaking'];
  return [...seen.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

/** The bullets of the CHANGELOG's `## [Unreleased]` section, each with its continuation lines joined. */
export function unreleasedEntries(changelog: string): string[] {
  const start = changelog.search(/^## \[Unreleased\]/m);
  if (start < 0) return [];
  const rest = changelog.slice(start).split('\n').slice(1);
  const end = rest.findIndex((l) => l.startsWith('## '));
  const entries: string[] = [];
  for (const line of end < 0 ? rest : rest.slice(0, end)) {
    if (/^- /.test(line)) entries.push(line.slice(2));
    else if (/^\s+\S/.test(line) && entries.length) entries[entries.length - 1] += ` ${line.trim()}`;
  }
  return entries;
}

/** An entry names a change when it holds each of its names in backticks; a breaking one must also say **Breaking**. */
export function isNamed(change: ContractChange, entries: readonly string[]): boolean {
  return entries.some(
    (e) => (change.kind !== 'breaking' || e.includes('**Breaking**')) && change.names.every((n) => e.includes(`\`${n}\``)),
  );
}

/** The changes the CHANGELOG does not name, each as one line for a failure message. */
export function unnamedChanges(changes: readonly ContractChange[], changelog: string): string[] {
  const entries = unreleasedEntries(changelog);
  return changes
    .filter((c) => !isNamed(c, entries))
    .map(
      (c) =>
        `${c.kind}: ${c.where}: ${c.description} (name ${c.names.map((n) => `\`${n}\``).join(' and ')}${c.kind === 'breaking' ? ' in a **Breaking** entry' : ''})`,
    );
}
