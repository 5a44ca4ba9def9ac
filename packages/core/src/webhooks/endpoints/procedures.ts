import { z } from 'zod';
import { internalProcedure } from '../../auth/internal.ts';
import { INTERNAL_ERRORS } from '../../errors/surfaces.ts';
import {
  RotatedSecret,
  WebhookEndpointCreateInput,
  WebhookEndpointIdInput,
  WebhookEndpointListInput,
  WebhookEndpointPage,
  WebhookEndpointUpdateInput,
  WebhookEndpointView,
} from './schemas.ts';
import { FilterPreview, FilterPreviewInput, PREVIEW_SCAN, previewFilter } from './preview.ts';
import {
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  enableEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from './service.ts';

const tags = ['Webhooks'];
const ERRORS = [...INTERNAL_ERRORS, 'forbidden_role'] as const;
const ON_RECORD = [...ERRORS, 'not_found'] as const;

/** Every answer carries a signing secret: never kept by a cache. */
const secretProcedure = internalProcedure.use(({ ctx, next }) => {
  ctx.setHeader('cache-control', 'no-store');
  return next();
});

/**
 * Webhook endpoints, owners and admins only. A plain record rather than a router, so that `webhooksRouter` composes it
 * with the delivery procedures (test, deliveries, redeliver, recover).
 */
export const endpointProcedures = {
  list: secretProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks', tags, summary: 'Webhook endpoints, newest first (owner or admin)' },
      errorCodes: [...ERRORS, 'invalid_cursor'],
    })
    .input(WebhookEndpointListInput)
    .output(WebhookEndpointPage)
    .query(({ ctx, input }) => listEndpoints(ctx.db, ctx.actor, input)),

  previewFilter: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/filter-preview',
        tags,
        summary: "Try a delivery filter against the workspace's recent events (owner or admin)",
        description: `Changes nothing. Looks at the workspace's ${PREVIEW_SCAN} newest events, keeps those of \`events\`, and says of each whether the filter lets it through.`,
      },
      errorCodes: ERRORS,
    })
    .input(FilterPreviewInput)
    .output(FilterPreview)
    .mutation(({ ctx, input }) => previewFilter(ctx.db, ctx.actor, input)),

  get: secretProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{id}', tags, summary: 'A webhook endpoint with its signing secret (owner or admin)' },
      errorCodes: ON_RECORD,
    })
    .input(WebhookEndpointIdInput)
    .output(WebhookEndpointView)
    .query(({ ctx, input }) => getEndpoint(ctx.db, ctx.actor, input.id)),

  create: secretProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks',
        tags,
        summary: 'Register a webhook endpoint (owner or admin)',
        description:
          'HTTPS only. The host is resolved at once: a URL that points at a private or internal address (or does not resolve) is still created, disabled, with `disabledReason` saying why.',
      },
      successStatus: 201,
      errorCodes: ERRORS,
    })
    .input(WebhookEndpointCreateInput)
    .output(WebhookEndpointView)
    .mutation(({ ctx, input }) => createEndpoint(ctx.db, ctx.deps, ctx.actor, input)),

  update: secretProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/webhooks/{id}',
        tags,
        summary: 'Change URL, events, description or filter (owner or admin)',
        description:
          'A new URL is checked again: a private or internal address disables the endpoint with the reason. A safe one does not enable a disabled endpoint; use /enable.',
      },
      errorCodes: ON_RECORD,
    })
    .input(WebhookEndpointUpdateInput)
    .output(WebhookEndpointView)
    .mutation(({ ctx, input }) => updateEndpoint(ctx.db, ctx.deps, ctx.actor, input)),

  delete: internalProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/webhooks/{id}',
        tags,
        summary: 'Delete a webhook endpoint and its delivery log (owner or admin)',
      },
      successStatus: 204,
      errorCodes: ON_RECORD,
    })
    .input(WebhookEndpointIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteEndpoint(ctx.db, ctx.actor, input.id)),

  enable: secretProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/enable',
        tags,
        summary: 'Turn an endpoint back on; resets the failure count (owner or admin)',
        description:
          'The URL is checked again first: while it points at a private or internal address, or does not resolve, the answer is 409 `webhook_url_refused` and nothing changes.',
      },
      errorCodes: [...ON_RECORD, 'webhook_url_refused', 'concurrent_update'],
    })
    .input(WebhookEndpointIdInput)
    .output(WebhookEndpointView)
    .mutation(({ ctx, input }) => enableEndpoint(ctx.db, ctx.deps, ctx.actor, input.id)),

  disable: secretProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhooks/{id}/disable', tags, summary: 'Stop deliveries to an endpoint (owner or admin)' },
      errorCodes: ON_RECORD,
    })
    .input(WebhookEndpointIdInput)
    .output(WebhookEndpointView)
    .mutation(({ ctx, input }) => disableEndpoint(ctx.db, ctx.deps, ctx.actor, input.id)),

  rotateSecret: secretProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/rotate-secret',
        tags,
        summary: 'Replace the signing secret (owner or admin)',
        description:
          'The new secret signs at once. For 24 hours the previous one still signs too: `webhook-signature` then carries two `v1,` signatures, so a receiver can switch without rejecting a delivery. `X-Webhook-Signature` uses the new secret only.',
      },
      errorCodes: ON_RECORD,
    })
    .input(WebhookEndpointIdInput)
    .output(RotatedSecret)
    .mutation(({ ctx, input }) => rotateSecret(ctx.db, ctx.deps, ctx.actor, input.id)),
};
