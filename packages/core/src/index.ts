export * from './config.ts';
export * from './errors.ts';
export type { Deps, Logger, RequestContext } from './context.ts';
export type { Actor } from './auth/actor.ts';
export type { Jobs } from './jobs/queue.ts';
export { v1Router, type V1Router } from './v1-router.ts';
export { restRoutes, matchRoute, type RestRoute } from './http/routes.ts';
export * from './auth/key-material.ts';
export { authenticate } from './auth/authenticate.ts';
