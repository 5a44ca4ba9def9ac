/**
 * The typed tRPC client of Leadwire's application surface (`{base_url}/trpc`), for scripts and internal frontends that
 * hold an Internal API key or a session token. Its own entry point, so the /v1 client carries no tRPC code; tRPC itself
 * is a peer dependency (one `TRPCClientError` class, shared with the application's own imports of `@trpc/client`).
 */
import { createTRPCClient, httpBatchLink, type TRPCClient } from '@trpc/client';
import type { InternalRouter } from './generated/internal-router.ts';

export { TRPCClientError } from '@trpc/client';
export type { InternalRouter };

/** What every way of authenticating shares. */
interface InternalClientBase {
  /** The spec's `{base_url}`: the server's origin plus `/api`, e.g. `https://crm.example.com/api`. */
  baseUrl: string;
  /** A `fetch` to use instead of the global one (a proxy agent, a test double of the network, a polyfill). */
  fetch?: typeof fetch;
}

/** How `createInternalClient` authenticates: an Internal API key (`ck_live_…`), or a session token (`lws_…`). */
export type InternalClientOptions = InternalClientBase & ({ apiKey: string } | { sessionToken: string });

/** The typed client: `client.me.query()`, `client.contacts.list.query({ limit: 25 })`, `client.deals.create.mutate(…)`. */
export type InternalClient = TRPCClient<InternalRouter>;

/**
 * Creates the typed client of the application surface. Calls made in the same tick travel in one HTTP request
 * (tRPC batching). A refused call rejects with `TRPCClientError`: `err.data.code` is tRPC's code for the HTTP status
 * (`UNAUTHORIZED`, `FORBIDDEN`, `NOT_FOUND`, `TOO_MANY_REQUESTS`, …), `err.data.httpStatus` the status and
 * `err.data.body` Leadwire's `{ error, code }` body. A Public API key is refused with 403 `wrong_api_surface`.
 */
export function createInternalClient(options: InternalClientOptions): InternalClient {
  const credential = 'apiKey' in options ? options.apiKey : options.sessionToken;
  if (typeof credential !== 'string' || credential === '') {
    throw new TypeError('createInternalClient needs an apiKey (an Internal API key) or a sessionToken');
  }
  if (typeof options.baseUrl !== 'string' || !options.baseUrl)
    throw new TypeError("createInternalClient needs baseUrl: the server's origin plus /api");
  const url = `${options.baseUrl.replace(/\/+$/, '')}/trpc`;
  return createTRPCClient<InternalRouter>({
    links: [
      httpBatchLink({
        url,
        headers: { authorization: `Bearer ${credential}` },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}
