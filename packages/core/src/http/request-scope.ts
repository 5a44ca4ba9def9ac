import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request id of the work under way, carried through its async calls: set by the HTTP app for each request and by
 * the job runtime for each job that a request queued. Whatever that work writes or queues takes it from here (the
 * events it writes, the jobs it queues), so no service has to pass it along, and work no request caused has none.
 */
const scope = new AsyncLocalStorage<{ requestId: string }>();

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/** Runs `fn` as part of the request `requestId` (none: as part of no request). */
export function withRequestId<T>(requestId: string | undefined, fn: () => T): T {
  return requestId === undefined ? scope.exit(fn) : scope.run({ requestId }, fn);
}

/**
 * pino's `mixin` for the process's own logger (`deps.log`, which workers and services log through): each line written
 * as part of a request, or of a job one queued, carries `reqId` like the request's own lines. Fastify's request
 * loggers are another logger and bind `reqId` themselves.
 */
export function requestIdMixin(): { reqId?: string } {
  const requestId = currentRequestId();
  return requestId === undefined ? {} : { reqId: requestId };
}
