import { me } from './accounts/me.ts';
import { router } from './trpc.ts';

/**
 * The application surface: typed tRPC for internal frontends at /api/trpc, and the same procedures as REST under
 * /api (described at /api/docs/json). Sessions and Internal keys reach it; Public API keys do not.
 */
export const internalRouter = router({
  me,
});

export type InternalRouter = typeof internalRouter;
