/*
 * `@leadwire/core`: configuration, the error model, the two routers and their REST routes, authentication, the clock.
 * The package exports only this and four named subpaths (package.json `exports`): `./boot` (configuration and errors
 * alone), `./runtime` (what a process composes), `./surfaces` (the services behind the hand-written routes) and
 * `./openapi` (the two documents).
 * Tests in this repository reach the inside through the root package's `#core/*` import map instead.
 */
export * from './config.ts';
export * from './errors.ts';
export type { BrowserSession, Deps, Logger, RequestContext, SessionCookie } from './context.ts';
export type { Actor, InternalActor } from './auth/actor.ts';
export { type Jobs, jobsOfRequest } from './jobs/queue.ts';
export { v1Router, type V1Router } from './v1-router.ts';
export { internalRouter, type InternalRouter } from './internal-router.ts';
export { restRoutes, matchRoute, unknownQueryKeys, type RestRoute } from './http/routes.ts';
export { createCallerFactory } from './trpc.ts';
export { checkDeprecation, DEPRECATION_MIN_DAYS, deprecationHeaders, type Deprecation } from './http/deprecation.ts';
export * from './auth/key-material.ts';
export { authenticate, knownRefusal } from './auth/authenticate.ts';
export { type Clock, systemClock } from './clock.ts';
export { type Random, systemRandom } from './random.ts';
export { EVENT_GROUPS } from './events/names.ts';
