import { randomBytes } from 'node:crypto';
import { setPasswordHashCost } from '#core/accounts/passwords.ts';
import { bootstrap } from '#core/accounts/service.ts';
import { openDb, openOrm } from '@leadwire/db';
import type pg from 'pg';
import { postJson, seedContacts } from './setup.ts';

/** One workspace of the soak: its keys (secrets: never printed), its form, and its endpoint's path on the receiver. */
export interface SoakWorkspace {
  orgId: string;
  publicKey: string;
  formId: string;
}

/** Every workspace's endpoint subscribes to these: one delivery per new contact and one per form submission. */
export const SOAK_EVENTS = ['contact.created', 'form.submitted'];

/**
 * `count` workspaces on the Max plan, made with the admin service as an operator would, each with `seeds` contacts,
 * one published form (email, first name, message) and one HTTPS endpoint on the receiver, registered through the
 * application's own routes (POST /api/forms, POST /api/webhooks) with the workspace's internal key.
 */
export async function createSoakWorkspaces(o: {
  url: string;
  pool: pg.Pool;
  origin: string;
  receiverOrigin: string;
  count: number;
  seeds: number;
}): Promise<SoakWorkspace[]> {
  // The owners never sign in, so their hashes may be the cheapest allowed: at the default cost 56 of them took minutes.
  setPasswordHashCost(12);
  const orm = await openOrm(o.url, { pool: { min: 0, max: 2 } });
  const out: SoakWorkspace[] = [];
  try {
    const db = await openDb(orm);
    for (let i = 0; i < o.count; i++) {
      const ws = await bootstrap(db, {
        name: `Soak ${i}`,
        ownerEmail: `soak-${i}-${Date.now()}@bench.example.com`,
        // Never used to sign in: a random one keeps the run free of fixed secrets.
        ownerPassword: randomBytes(18).toString('base64url'),
        plan: 'max',
      });
      const endpoint = await postJson<{ enabled: boolean }>(`${o.origin}/api/webhooks`, ws.internalKey, {
        url: `${o.receiverOrigin}/hook/${i}`,
        events: SOAK_EVENTS,
        description: 'soak receiver',
      });
      if (!endpoint.enabled) throw new Error('the soak endpoint was created disabled: is WEBHOOKS_UNSAFE_ALLOW_LOOPBACK set?');
      const form = await postJson<{ id: string }>(`${o.origin}/api/forms`, ws.internalKey, {
        name: 'Soak form',
        published: true,
        fields: [
          { id: 'email', label: 'Email', type: 'email', required: true },
          { id: 'first_name', label: 'First name', type: 'text', required: false },
          { id: 'message', label: 'Message', type: 'textarea', required: false },
        ],
      });
      await seedContacts(o.pool, ws.orgId, o.seeds);
      out.push({ orgId: ws.orgId, publicKey: ws.publicKey, formId: form.id });
    }
  } finally {
    await orm.close(true);
  }
  return out;
}
