import { router } from '../trpc.ts';
import { deliveryProcedures } from './delivery/procedures.ts';

/** `/api/webhooks`: the endpoints owners and admins register, and (from the delivery engine) their delivery logs. */
export const webhooksRouter = router({
  ...deliveryProcedures,
});
