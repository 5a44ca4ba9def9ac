/*
 * `@leadwire/core/boot`: the configuration and the error model alone, for an entry point that must answer before it
 * loads the routers and the services (the admin CLI's --help and argument errors, in a fraction of the package index's
 * start-up time).
 */
export * from './config.ts';
export { AppError } from './errors.ts';
