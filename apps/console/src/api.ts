import type { InternalRouter } from '@leadwire/core';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';

/** The CSRF value the server sets beside the HttpOnly session cookie (`__Host-` over HTTPS); sent back as a header. */
function csrfToken(): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === '__Host-lw_csrf' || name === 'lw_csrf') return decodeURIComponent(value.join('='));
  }
  return undefined;
}

/**
 * The internal API, typed end to end by the server's router: the console calls nothing else. Sessions travel as an
 * HttpOnly cookie (asked for by `x-leadwire-session: cookie`), so no script, ours included, can read the token.
 */
export const api = createTRPCClient<InternalRouter>({
  links: [
    httpLink({
      url: '/api/trpc',
      headers: () => {
        const csrf = csrfToken();
        return { 'x-leadwire-session': 'cookie', ...(csrf ? { 'x-csrf-token': csrf } : {}) };
      },
    }),
  ],
});

export type Inputs = inferRouterInputs<InternalRouter>;
export type Outputs = inferRouterOutputs<InternalRouter>;
export type Me = Outputs['me'];

/** A refusal as the console shows it: the server's sentence, its code, and the fields it names. */
export interface Problem {
  message: string;
  code: string;
  status: number;
  /** Messages by input path (`name`, `fields.0.label`), for showing beside the field that caused them. */
  fields: Record<string, string>;
}

interface ErrorBody {
  error?: string;
  code?: string;
  issues?: { path: string; message: string }[];
}

export function problemOf(err: unknown): Problem {
  if (err instanceof TRPCClientError) {
    const data = err.data as { httpStatus?: number; body?: ErrorBody } | undefined;
    const body = data?.body;
    const fields: Record<string, string> = {};
    for (const issue of body?.issues ?? []) fields[issue.path] ??= issue.message;
    if (body?.code) return { message: body.error ?? err.message, code: body.code, status: data?.httpStatus ?? 0, fields };
    // No answer of ours: the network or the server's front door failed.
    return { message: 'The server could not be reached. Check your connection and try again.', code: 'network', status: 0, fields };
  }
  return { message: err instanceof Error ? err.message : String(err), code: 'unexpected', status: 0, fields: {} };
}
