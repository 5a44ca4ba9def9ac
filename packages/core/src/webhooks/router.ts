import { router } from '../trpc.ts';
import { deliveryProcedures } from './delivery/procedures.ts';
import { endpointProcedures } from './endpoints/procedures.ts';
import { listenProcedures } from './listen/procedures.ts';

/** `/api/webhooks`: the endpoints owners and admins register, their delivery logs and manual deliveries. */
export const webhooksRouter = router({
  ...endpointProcedures,
  ...deliveryProcedures,
  ...listenProcedures,
});
