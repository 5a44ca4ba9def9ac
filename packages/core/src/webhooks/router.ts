import { router } from '../trpc.ts';
import { endpointProcedures } from './endpoints/procedures.ts';

/** `/api/webhooks`: the endpoints owners and admins register, and (from the delivery engine) their delivery logs. */
export const webhooksRouter = router({
  ...endpointProcedures,
});
