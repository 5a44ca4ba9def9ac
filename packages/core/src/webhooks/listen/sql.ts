import { qb, sql, statement } from '@leadwire/db';

/**
 * Statements of `leadwire listen`. The outbox trigger (migration Migration20261123100000) notifies only
 * for organizations that have a row in webhook_listeners, so these rows are what turns the stream on and off.
 */

/** The person's listen secret, created on first use; the no-op update makes `returning` give the stored one. */
export const LISTEN_SECRET = statement<{ orgId: string; userId: string; secret: string }>()((p) =>
  qb
    .insertInto('webhook_listen_secrets')
    .values({ organization_id: p.orgId, user_id: p.userId, secret: p.secret })
    .onConflict((oc) =>
      oc.columns(['organization_id', 'user_id']).doUpdateSet((eb) => ({ organization_id: eb.ref('excluded.organization_id') })),
    )
    .returning('secret'),
);

export const UPSERT_LISTENER = statement<{ orgId: string; processKey: string; expiresAt: Date }>()((p) =>
  qb
    .insertInto('webhook_listeners')
    .values({ organization_id: p.orgId, process_key: p.processKey, expires_at: p.expiresAt })
    .onConflict((oc) =>
      oc.columns(['organization_id', 'process_key']).doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') })),
    ),
);

export const DELETE_LISTENER = statement<{ orgId: string; processKey: string }>()((p) =>
  qb.deleteFrom('webhook_listeners').where('organization_id', '=', p.orgId).where('process_key', '=', p.processKey),
);

export const REFRESH_LISTENERS = statement<{ expiresAt: Date; processKey: string }>()((p) =>
  qb.updateTable('webhook_listeners').set({ expires_at: p.expiresAt }).where('process_key', '=', p.processKey),
);

export const DELETE_PROCESS_LISTENERS = statement<{ processKey: string }>()((p) =>
  qb.deleteFrom('webhook_listeners').where('process_key', '=', p.processKey),
);

/** Rows of processes that died without removing theirs: they would keep the trigger notifying for nobody. */
export const DELETE_EXPIRED_LISTENERS = statement<{ now: Date }>()((p) =>
  qb.deleteFrom('webhook_listeners').where('expires_at', '<', p.now),
);

export const ANY_LISTENER = statement<{ orgId: string }>()((p) =>
  qb.selectNoFrom((eb) =>
    eb
      .exists(eb.selectFrom('webhook_listeners').select(sql.lit(1).as('one')).where('organization_id', '=', p.orgId))
      .$castTo<boolean>()
      .as('listening'),
  ),
);

/** The events a notification names, in the order they were written. */
export const EVENTS_BY_ID = statement<{ ids: string[]; orgId: string }>()((p) =>
  qb
    .selectFrom('outbox_events')
    .select(['id', 'organization_id', 'event', 'payload'])
    .where('id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`))
    .where('organization_id', '=', p.orgId)
    .orderBy('created_at')
    .orderBy('id'),
);

export const NOTIFY = statement<{ channel: string; message: string }>()((p) =>
  qb.selectNoFrom((eb) => eb.fn<void>('pg_notify', [eb.val(p.channel), eb.val(p.message)]).as('notified')),
);
