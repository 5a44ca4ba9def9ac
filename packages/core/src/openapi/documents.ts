import type { AnyTRPCRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { oas31 } from 'zod-openapi';
import { SourceSchema } from '../contacts/v1/schemas.ts';
import { type RestRoute, restRoutes } from '../http/routes.ts';
import { apiDescription } from './description.ts';
import { documentDeprecation } from './deprecation.ts';
import { constToEnum, errorResponses, errorSchemas, type ExampleContext, pruneUnusedComponents } from './errors.ts';
import { finishInternalDocument } from './internal.ts';
import type { ErrorCode } from '../errors.ts';
import { applyRequestExamples, INTERNAL_REQUEST_EXAMPLES, V1_REQUEST_EXAMPLES } from './examples.ts';
import { headerComponents, parameter, parameterComponents, responseHeaders } from './headers.ts';
import { addWebhooks } from './webhooks.ts';
import { internalRouter } from '../internal-router.ts';
import { v1Router } from '../v1-router.ts';

type Schema = oas31.SchemaObject | oas31.ReferenceObject;

/** Leadwire's licence, as package.json says. */
const LICENSE = { name: 'MIT', identifier: 'MIT' };

/** Every operation can fail validation or fail on our side. */
const ALWAYS = ['validation_failed', 'internal_error'] as const satisfies readonly ErrorCode[];
/** Refused at the HTTP edge, before any route runs (apps/server http/edge.ts, connection-guard.ts): any operation. */
const EDGE = [
  'malformed_url',
  'bad_request',
  'request_timeout',
  'headers_too_large',
  'too_many_connections',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];
/** Every body can be malformed, too big, or not JSON. */
const BODY = [
  'malformed_json',
  'payload_too_large',
  'unsupported_media_type',
  'unsupported_content_encoding',
] as const satisfies readonly ErrorCode[];
/** What the Public API key check answers (publicApiProcedure). */
const PUBLIC_KEY = ['unauthorized', 'wrong_api_surface', 'insufficient_scope', 'rate_limited'] as const satisfies readonly ErrorCode[];
/** What a session or Internal key check answers (internalProcedure). */
const INTERNAL_AUTH = ['unauthorized', 'wrong_api_surface', 'rate_limited'] as const satisfies readonly ErrorCode[];
/** What /v1's idempotency wiring answers on every POST. */
const IDEMPOTENCY = ['idempotency_key_reused', 'idempotency_in_progress'] as const satisfies readonly ErrorCode[];

/** The codes an operation can answer with: those its meta declares, and those its wiring implies. */
function codesOf(route: RestRoute, op: oas31.OperationObject, wiring: readonly ErrorCode[]): Set<ErrorCode> {
  return new Set<ErrorCode>([
    ...route.errorCodes,
    ...ALWAYS,
    ...EDGE,
    ...wiring,
    // A body can be sent to any method but GET, documented or not, and is parsed before the operation runs.
    ...(op.requestBody || route.method !== 'GET' ? BODY : []),
    // Any write that fails on the database is rolled back and answered save_failed (trpc.ts databaseFailures).
    ...(route.type === 'mutation' ? (['save_failed'] as const) : []),
  ]);
}

const TAGS = [
  { name: 'Contacts', description: 'List, read, look up and upsert contacts.' },
  { name: 'Companies', description: 'List, read, find and upsert companies, matched on their normalised domain.' },
  { name: 'Leads', description: 'Upsert a contact and place it on a pipeline.' },
  { name: 'Notes', description: 'Attach notes to contacts.' },
  { name: 'Events', description: 'The changes feed: every event of the workspace in commit order, to reconcile or poll.' },
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
  const media = (op: oas31.OperationObject | undefined) =>
    (op?.requestBody as oas31.RequestBodyObject | undefined)?.content['application/json'];
  const upsertMedia = media(upsert);
  const contacts = media(batch)?.schema as oas31.SchemaObject | undefined;
  if (!upsertMedia?.schema || !contacts?.properties?.contacts) return;
  doc.components!.schemas!.ContactUpsertInput = upsertMedia.schema;
  upsertMedia.schema = { $ref: '#/components/schemas/ContactUpsertInput' };
  (contacts.properties.contacts as oas31.SchemaObject).items = { $ref: '#/components/schemas/ContactUpsertInput' };
}

function finishOperation(doc: oas31.OpenAPIObject, route: RestRoute, shared: Record<string, oas31.ResponseObject>) {
  const op = operationOf(doc, route);
  const permission = route.permission;
  if (!permission) throw new Error(`OpenAPI: ${route.procedure} declares no permission (use publicApiProcedure)`);
  const isPost = route.method === 'POST';
  const contactWrite = writesContacts(doc, op);

  // Bearer is not OAuth, but OpenAPI 3.1 lets a requirement name roles: here, the key permission.
  // Alternatives are requirements of their own: any one of them lets the key in (OpenAPI ORs the list).
  op.security = [permission, ...route.alsoPermitted].map((p) => ({ bearerAuth: [p] }));
  const needs = [permission, ...route.alsoPermitted].map((p) => `\`${p}\``).join(' or ');
  op.description = [op.description, `Requires the ${needs} permission.`].filter(Boolean).join('\n\n');
  op.parameters = [
    ...(op.parameters ?? []),
    ...(isPost ? [parameter('IdempotencyKey')] : []),
    ...(contactWrite ? [parameter('XSource')] : []),
  ];

  const success = (op.responses?.['200'] ?? {}) as oas31.ResponseObject;
  const codes = codesOf(route, op, [...PUBLIC_KEY, ...(isPost ? IDEMPOTENCY : [])]);
  const props = Object.keys(bodySchema(doc, op)?.properties ?? {});
  const ctx: ExampleContext = {
    permission,
    field: props[0] ?? (op.parameters[0] as oas31.ParameterObject | undefined)?.name ?? '',
    notFound: route.path.includes('{id}')
      ? 'No contact with id 3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10'
      : 'No contact with email ada@example.com',
  };
  Object.assign(op, { 'x-error-codes': [...codes].sort() });
  op.responses = {
    [String(route.successStatus)]: {
      ...success,
      description: route.successStatus === 201 ? 'Created.' : 'Success.',
      headers: responseHeaders({ mode: 'v1', always: true, replay: isPost }),
    },
    ...errorResponses(codes, { mode: 'v1', ctx }, shared),
  };
  documentDeprecation(doc, op, route);
}

/**
 * The OpenAPI 3.1 contract of the public API v1. trpc-to-openapi derives paths and body schemas from the router; the
 * rest is ours: the error model of errors.ts instead of the generator's, the success status and error codes from
 * each procedure's meta, the rate-limit and idempotency headers, and the prose rules. Built once per process.
 */
export function buildV1OpenApiDocument(baseUrl: string, router: AnyTRPCRouter = v1Router): oas31.OpenAPIObject {
  const serverUrl = `${baseUrl}/v1`;
  const doc: oas31.OpenAPIObject = generateOpenApiDocument(router, {
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

  const routes = restRoutes(router);
  shareContactInput(doc, routes);
  const shared: Record<string, oas31.ResponseObject> = {};
  for (const route of routes) finishOperation(doc, route, shared);
  doc.components.responses = shared;
  applyRequestExamples((r) => operationOf(doc, r), routes, V1_REQUEST_EXAMPLES);
  addWebhooks(doc);
  return finishDocument(doc);
}

/**
 * The internal surface's contract: generated from the router, then given the error catalogue as on /v1 (each
 * operation's responses from the codes its meta declares and its wiring implies), its security, tags and descriptions
 * (openapi/internal.ts).
 */
export function buildInternalOpenApiDocument(baseUrl: string): oas31.OpenAPIObject {
  const doc: oas31.OpenAPIObject = generateOpenApiDocument(internalRouter, {
    title: 'Leadwire application API (internal)',
    version: '1.0.0',
    baseUrl,
    description:
      'The application surface: a session token (`lws_...`) or an Internal API key (`ck_live_...`) in `Authorization: Bearer`, or an Internal key in `X-Api-Key`. Errors are `{ "error", "code" }` as on /v1, from one catalogue: see ErrorBody and the shapes beside it. A GET with a query parameter the operation does not take is refused with 400 `validation_failed` naming it (before the credential is checked, like an unknown path). The same procedures are served as typed tRPC at /api/trpc.',
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'A session token (`lws_...`) or an Internal API key (`ck_live_...`).' },
      apiKeyHeader: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Api-Key',
        description:
          'An Internal API key, for platforms that cannot set `Authorization` (Zapier and the like); the same checks and limits apply.',
      },
    },
  });
  const schemas = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  doc.components = { ...doc.components, schemas: { ...schemas, ...errorSchemas() }, headers: headerComponents() };
  const routes = restRoutes(internalRouter);
  applyRequestExamples((r) => operationOf(doc, r), routes, INTERNAL_REQUEST_EXAMPLES);
  const shared: Record<string, oas31.ResponseObject> = {};
  const authenticated = (route: RestRoute) => route.auth === 'internal';
  for (const route of routes) {
    const op = operationOf(doc, route);
    const keyed = authenticated(route);
    const codes = codesOf(route, op, keyed ? INTERNAL_AUTH : []);
    Object.assign(op, { 'x-error-codes': [...codes].sort() });
    const mode = keyed ? 'internal-key' : 'none';
    const { '200': success } = op.responses ?? {};
    op.responses = {
      // A 204 has no body: the generator's empty-schema JSON content for a void output would promise one.
      [String(route.successStatus)]:
        route.successStatus === 204
          ? { description: 'No content.', headers: responseHeaders({ mode, always: false }) }
          : { ...(success as oas31.ResponseObject), description: 'Success.', headers: responseHeaders({ mode, always: false }) },
      ...errorResponses(codes, { mode, ctx: { permission: '', field: '', notFound: '' } }, shared),
    };
    op.security = keyed ? [{ bearerAuth: [] }, { apiKeyHeader: [] }] : [];
    documentDeprecation(doc, op, route);
  }
  doc.components.responses = shared;
  finishInternalDocument(doc, routes, (r) => operationOf(doc, r), authenticated);
  return finishDocument(doc);
}

/** What both documents end with: unused components dropped, `const` written as one-value enums, the licence. */
function finishDocument(doc: oas31.OpenAPIObject): oas31.OpenAPIObject {
  pruneUnusedComponents(doc, new Set(Object.keys(errorSchemas())));
  constToEnum(doc.paths);
  constToEnum(doc.webhooks);
  constToEnum(doc.components);
  doc.info.license = LICENSE;
  return doc;
}
