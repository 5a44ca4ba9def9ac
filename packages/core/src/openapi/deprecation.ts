import type { oas31 } from 'zod-openapi';
import type { RestRoute } from '../http/routes.ts';

type Schema = oas31.SchemaObject | oas31.ReferenceObject;

const DEPRECATION_HEADERS: Record<string, oas31.HeaderObject> = {
  Deprecation: {
    description: 'When this operation (or a field it uses) was deprecated, as `@<unix seconds>` (RFC 9745).',
    required: true,
    schema: { type: 'string', pattern: '^@\\d+$', example: '@1767225600' },
  },
  Sunset: {
    description: 'The day after which it may stop working, as an HTTP date (RFC 8594).',
    required: true,
    schema: { type: 'string', example: 'Thu, 01 Jul 2027 00:00:00 GMT' },
  },
  Link: {
    description: 'The deprecation notice: `<url>; rel="deprecation"` (RFC 9745).',
    required: true,
    schema: { type: 'string', example: '<https://example.com/changelog#deprecated>; rel="deprecation"' },
  },
};

function resolve(doc: oas31.OpenAPIObject, schema: Schema | undefined): oas31.SchemaObject | undefined {
  if (!schema) return undefined;
  if (!('$ref' in schema) || !schema.$ref) return schema as oas31.SchemaObject;
  return resolve(doc, doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]);
}

/** Marks each named field deprecated wherever the schema holds it: its properties, its items', its branches'. */
function markFields(doc: oas31.OpenAPIObject, schema: Schema | undefined, fields: ReadonlySet<string>, seen = new Set<object>()) {
  const s = resolve(doc, schema);
  if (!s || seen.has(s)) return;
  seen.add(s);
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    if (fields.has(name)) Object.assign(resolve(doc, prop) ?? {}, { deprecated: true });
    markFields(doc, prop, fields, seen);
  }
  for (const sub of [s.items, ...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) markFields(doc, sub, fields, seen);
}

/**
 * A deprecated route in the document: `deprecated: true` on the operation (or on its named fields and parameters),
 * the dates and the notice in its description, and the three headers its answers carry on the success response
 * (every answer carries them; error responses are shared components, so their description says it once).
 */
export function documentDeprecation(doc: oas31.OpenAPIObject, op: oas31.OperationObject, route: RestRoute) {
  const d = route.deprecated;
  if (!d) return;
  const fields = new Set(d.fields ?? []);
  if (fields.size === 0) op.deprecated = true;
  else {
    for (const p of (op.parameters ?? []) as oas31.ParameterObject[]) if (fields.has(p.name)) p.deprecated = true;
    const body = op.requestBody as oas31.RequestBodyObject | undefined;
    markFields(doc, body?.content['application/json']?.schema, fields);
    const success = op.responses?.[String(route.successStatus)] as oas31.ResponseObject | undefined;
    markFields(doc, success?.content?.['application/json']?.schema, fields);
  }
  const what = fields.size ? `The fields ${[...fields].map((f) => `\`${f}\``).join(', ')} are` : 'This operation is';
  op.description = [
    op.description,
    `**Deprecated.** ${what} deprecated since ${d.since} and may stop working after ${d.sunset} (notice: ${d.notice}). Every answer carries \`Deprecation\`, \`Sunset\` and \`Link\` (rel="deprecation").`,
  ]
    .filter(Boolean)
    .join('\n\n');
  const success = op.responses?.[String(route.successStatus)] as oas31.ResponseObject | undefined;
  if (success) success.headers = { ...success.headers, ...DEPRECATION_HEADERS };
}
