/**
 * sdk/src/generated/internal-router.ts, the router type `@leadwire/sdk/internal` ships, must be the server's router as
 * it is now: the same procedures, each of the same kind with its input and output assignable both ways, and the same
 * error shape. The type check (`npm test`'s static checks) holds it, over types it infers for the server anyway, and
 * names every procedure that differs until `npm run sdk:generate` writes the file again.
 */
import type { InternalRouter as ServerRouter } from '@leadwire/core';
import type {
  AnyTRPCMutationProcedure,
  AnyTRPCProcedure,
  AnyTRPCQueryProcedure,
  AnyTRPCRouter,
  AnyTRPCSubscriptionProcedure,
  inferProcedureInput,
  inferProcedureOutput,
  inferTRPCClientTypes,
} from '@trpc/server';
import type { InternalRouter as GeneratedRouter } from '../src/generated/internal-router.ts';

/** Assignable both ways: what a client may send and what it gets back are the same sets of values. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

type Kind<P> = P extends AnyTRPCQueryProcedure
  ? 'query'
  : P extends AnyTRPCMutationProcedure
    ? 'mutation'
    : P extends AnyTRPCSubscriptionProcedure
      ? 'subscription'
      : never;

type Signature<P extends AnyTRPCProcedure> = { kind: Kind<P>; input: inferProcedureInput<P>; output: inferProcedureOutput<P> };

/** The dotted paths of the procedures (or sub-routers) of `A` and `B` that one lacks or that differ between them. */
type Differences<A, B, Prefix extends string = ''> = {
  [K in (keyof A | keyof B) & string]: K extends keyof A
    ? K extends keyof B
      ? A[K] extends AnyTRPCProcedure
        ? B[K] extends AnyTRPCProcedure
          ? Same<Signature<A[K]>, Signature<B[K]>> extends true
            ? never
            : `${Prefix}${K}`
          : `${Prefix}${K}`
        : B[K] extends AnyTRPCProcedure
          ? `${Prefix}${K}`
          : Differences<A[K], B[K], `${Prefix}${K}.`>
      : `${Prefix}${K}`
    : `${Prefix}${K}`;
}[(keyof A | keyof B) & string];

/** A built router's procedures and sub-routers, without the members every router has (`_def`, `createCaller`). */
type Procedures<R> = Omit<R, keyof AnyTRPCRouter>;

// `& string` is what makes the compiler print the procedures' names in its error, rather than the alias.
// oxlint-disable-next-line typescript/no-redundant-type-constituents -- never while the file is current, by design
declare const differences: Differences<Procedures<ServerRouter>, Procedures<GeneratedRouter>> & string;
/** Fails naming each procedure whose generated type is not the server's: run `npm run sdk:generate`. */
export const none: never = differences;

type ClientTypes<R extends AnyTRPCRouter> = Pick<inferTRPCClientTypes<R>, 'errorShape' | 'transformer'>;
/** The error shape and transformer a client is typed with (not ctx and meta, which stay on the server); a difference: run `npm run sdk:generate`. */
export const sameClientTypes: Same<ClientTypes<ServerRouter>, ClientTypes<GeneratedRouter>> = true;
