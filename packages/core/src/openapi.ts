import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { oas31 } from 'zod-openapi';
import { SourceSchema } from './contacts/v1/schemas.ts';
import { type RestRoute, restRoutes } from './http/routes.ts';
import { apiDescription } from './openapi/description.ts';
import { EDGE_ERRORS, edgeErrorResponses, errorResponses, errorSchemas, type ExampleContext } from './openapi/errors.ts';
import { applyRequestExamples, INTERNAL_REQUEST_EXAMPLES, V1_REQUEST_EXAMPLES } from './openapi/examples.ts';
import { headerComponents, parameter, parameterComponents, responseHeaders } from './openapi/headers.ts';
import { addWebhooks } from './openapi/webhooks.ts';
import { internalRouter } from './internal-router.ts';
import { v1Router } from './v1-router.ts';

type Schema = oas31.SchemaObject | oas31.ReferenceObject;


/** Every operation can fail validation or fail on our side; every body can be malformed, too big or not JSON. */
const ALWAYS = ['validation_failed', 'internal_error'];
const BODY_ERRORS = ['malformed_json', 'payload_too_large', 'unsupported_media_type', 'unsupported_content_encoding'];

const TAGS = [
  { name: 'Contacts', description: 'Look up and upsert contacts.' },
  { name: 'Companies', description: 'Upsert companies, matched on their normalised domain.' },
  { name: 'Leads', description: 'Upsert a contact and place it on a pipeline.' },
  { name: 'Notes', description: 'Attach notes to contacts.' },
];

function resolve(doc: oas31.OpenAPIObject, schema: Schema | undefined): oas31.SchemaObject | undefined {
  if (!schema) return undefined;
  if (!('$ref' in schema) || !schema.$ref) return schema as oas31.SchemaObject;
  return resolve(doc, doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]);
}

function bodySchema(doc: oas31.OpenAPIObject, op: oas31.OperationObject): oas31.SchemaObject | undefined {
  const body = op.requestBody as oas31.RequestBodyObject | undefined;
  return resolve(doc, body?.content['application/json']?.schema);
}

/** Contact writes are the bodies that carry a contact `source`, directly or in a list of contacts. */
function writesContacts(doc: oas31.OpenAPIObject, op: oas31.OperationObject): boolean {
  const props = bodySchema(doc, op)?.properties ?? {};
  return 'source' in props || Object.values(props).some((p) => 'source' in (resolve(doc, resolve(doc, p)?.items)?.properties ?? {}));
}

function operationOf(doc: oas31.OpenAPIObject, route: RestRoute): oas31.OperationObject {
  const item = doc.paths?.[route.path] as Record<string, oas31.OperationObject | undefined> | undefined;
  const op = item?.[route.method.toLowerCase()];
  if (!op) throw new Error(`OpenAPI: no operation generated for ${route.method} ${route.path}`);
  return op;
}

/**
 * The batch body is `contacts: unknown[]` so that a bad row fails alone instead of failing the call; the document
 * shows the row shape anyway, as the one contact upsert body both operations share.
 */
function shareContactInput(doc: oas31.OpenAPIObject, routes: RestRoute[]) {
  const byName = new Map(routes.map((r) => [r.procedure, operationOf(doc, r)]));
  const upsert = byName.get('contacts.upsert');
  const batch = byName.get('contacts.batchUpsert');
  const media = (op: oas31.OperationObject | undefined) => (op?.requestBody as oas31.RequestBodyObject | undefined)?.content['application/json'];
  const upsertMedia = media(upsert);
  const contacts = media(batch)?.schema as oas31.SchemaObject | undefined;
  if (!upsertMedia?.schema || !contacts?.properties?.contacts) return;
  doc.components!.schemas!.ContactUpsertInput = upsertMedia.schema;
  upsertMedia.schema = { $ref: '#/components/schemas/ContactUpsertInput' };
  (contacts.properties.contacts as oas31.SchemaObject).items = { $ref: '#/components/schemas/ContactUpsertInput' };
}

function finishOperation(doc: oas31.OpenAPIObject, route: RestRoute) {
  const op = operationOf(doc, route);
  const permission = route.permission;
  if (!permission) throw new Error(`OpenAPI: ${route.procedure} declares no permission (use publicApiProcedure)`);
  const isPost = route.method === 'POST';
  const hasBody = op.requestBody !== undefined;
  const contactWrite = writesContacts(doc, op);

  // Bearer is not OAuth, but OpenAPI 3.1 lets a requirement name roles: here, the key permission.
  op.security = [{ bearerAuth: [permission] }];
  op.description = [op.description, `Requires the \`${permission}\` permission.`].filter(Boolean).join('\n\n');
  op.parameters = [
    ...(op.parameters ?? []),
    ...(isPost ? [parameter('IdempotencyKey')] : []),
    ...(contactWrite ? [parameter('XSource')] : []),
  ];

  const success = (op.responses?.['200'] ?? {}) as oas31.ResponseObject;
  const codes = new Set([
    ...route.errorCodes,
    ...ALWAYS,
    ...EDGE_ERRORS,
    ...(route.path.includes('{') ? ['malformed_url'] : []),
    ...(hasBody ? BODY_ERRORS : []),
    // Any write that fails on the database is rolled back and answered save_failed (issue 16).
    ...(isPost ? ['save_failed'] : []),
  ]);
  const props = Object.keys(bodySchema(doc, op)?.properties ?? {});
  const ctx: ExampleContext = {
    permission,
    field: props[0] ?? (op.parameters[0] as oas31.ParameterObject | undefined)?.name ?? '',
    notFound: route.path.includes('{id}') ? 'No contact with id 3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10' : 'No contact with email ada@example.com',
  };
  op.responses = {
    [String(route.successStatus)]: {
      ...success,
      description: route.successStatus === 201 ? 'Created.' : 'Success.',
      headers: responseHeaders({ always: true, replay: isPost }),
    },
    ...errorResponses(codes, ctx, `${route.method} ${route.path}`),
  };
}

/**
 * The OpenAPI 3.1 contract of the public API v1. trpc-to-openapi derives paths and body schemas from the router; the
 * rest is ours: the error model of errors.ts instead of the generator's, the success status and error codes from
 * each procedure's meta, the rate-limit and idempotency headers, and the prose rules. Built once per process.
 */
export function buildV1OpenApiDocument(baseUrl: string): oas31.OpenAPIObject {
  const serverUrl = `${baseUrl}/v1`;
  const doc: oas31.OpenAPIObject = generateOpenApiDocument(v1Router, {
    title: 'Leadwire public API',
    version: '1.0.0',
    baseUrl: serverUrl,
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'ck_live_...',
        description: 'A Public API key (`ck_live_...`), created in the app with the permissions it needs.',
      },
    },
    defs: { Source: SourceSchema },
  });

  doc.info.description = apiDescription(serverUrl);
  doc.servers = [{ url: serverUrl, description: 'Leadwire public API v1' }];
  doc.tags = TAGS;
  const schemas = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  doc.components = {
    ...doc.components,
    schemas: { ...schemas, ...errorSchemas() },
    headers: headerComponents(),
    parameters: parameterComponents(),
  };

  const routes = restRoutes(v1Router);
  shareContactInput(doc, routes);
  for (const route of routes) finishOperation(doc, route);
  applyRequestExamples((r) => operationOf(doc, r), routes, V1_REQUEST_EXAMPLES);
  addWebhooks(doc);
  return doc;
}

/**
 * The internal surface's contract: generated from the router, then given the same error model as /v1 (the generator's
 * own error shapes replaced by `Error`) and each operation's success status. Its error codes are many and specific to
 * each area, so responses list statuses with the shared body rather than one example per code.
 */
export function buildInternalOpenApiDocument(baseUrl: string): oas31.OpenAPIObject {
  const doc: oas31.OpenAPIObject = generateOpenApiDocument(internalRouter, {
    title: 'Leadwire application API (internal)',
    version: '1.0.0',
    baseUrl,
    description:
      'The application surface: a session token (`lws_...`) or an Internal API key (`ck_live_...`) in `Authorization: Bearer`. Errors are `{ "error", "code" }` as on /v1. The same procedures are served as typed tRPC at /api/trpc.',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A session token or an Internal API key' } },
  });
  const schemas = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  doc.components = { ...doc.components, schemas: { ...schemas, ...errorSchemas() }, headers: headerComponents() };
  const errorBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  const routes = restRoutes(internalRouter);
  applyRequestExamples((r) => operationOf(doc, r), routes, INTERNAL_REQUEST_EXAMPLES);
  for (const route of routes) {
    const op = operationOf(doc, route);
    // Every code this operation can answer with, machine-readable (the fuzz test holds the server to it).
    const codes = new Set([...route.errorCodes, ...ALWAYS, ...(op.requestBody ? BODY_ERRORS : [])]);
    Object.assign(op, { 'x-error-codes': [...codes].sort() });
    const { '200': success, ...errors } = op.responses ?? {};
    op.responses = {
      // A 204 has no body: the generator's empty-schema JSON content for a void output would promise one.
      [String(route.successStatus)]: route.successStatus === 204 ? { description: 'No content.' } : (success ?? { description: 'Success.' }),
      ...Object.fromEntries(
        Object.entries(errors).map(([status, r]) => [status, { description: (r as oas31.ResponseObject).description, ...errorBody }]),
      ),
      ...edgeErrorResponses(),
    };
  }
  return doc;
}
