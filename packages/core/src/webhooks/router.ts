import { router } from '../trpc.ts';
import { deliveryProcedures } from './delivery/procedures.ts';
import { eventTypeProcedures } from './endpoints/event-types.ts';
import { endpointProcedures } from './endpoints/procedures.ts';
import { listenProcedures } from './listen/procedures.ts';

/** `/api/webhooks`: the endpoints owners and admins register, their delivery logs and manual deliveries. */
export const webhooksRouter = router({
  // Before the endpoint procedures: `/webhooks/event-types` must not be taken for `/webhooks/{id}`.
  ...eventTypeProcedures,
  ...endpointProcedures,
  ...deliveryProcedures,
  ...listenProcedures,
});
