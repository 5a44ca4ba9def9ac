import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/**
 * The signing secret of `leadwire listen`: one per person and organization, created on their first listen and the same
 * on every later one (whichever of their keys or sessions they listen with), so a local receiver configured with it
 * keeps working across restarts of the command. Gone with the user.
 */
export const WebhookListenSecretSchema = defineEntity({
  name: 'WebhookListenSecret',
  tableName: 'webhook_listen_secrets',
  uniques: [{ name: 'webhook_listen_secrets_org_user_unique', properties: ['organization', 'user'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    /** `whsec_` + base64 of random bytes, like an endpoint's. */
    secret: p.text(),
  },
});
export class WebhookListenSecret extends WebhookListenSecretSchema.class {}
WebhookListenSecretSchema.setClass(WebhookListenSecret);

/**
 * Organizations someone is listening to, one row per server process that holds a listen stream of it. The outbox
 * trigger notifies only for these organizations, so nobody listening costs one probe of an empty table per insert
 * statement. A process refreshes its rows while streaming and deletes them when its last stream of the organization
 * ends; rows of a crashed process expire and are removed by the next process that listens and by the hourly cleanup.
 */
export const WebhookListenerSchema = defineEntity({
  name: 'WebhookListener',
  tableName: 'webhook_listeners',
  uniques: [{ name: 'webhook_listeners_org_process_unique', properties: ['organization', 'processKey'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    /** A random id of the server process, new at each start. */
    processKey: p.uuid(),
    expiresAt: p.datetime(),
  },
});
export class WebhookListener extends WebhookListenerSchema.class {}
WebhookListenerSchema.setClass(WebhookListener);
