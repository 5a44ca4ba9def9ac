import type { ApiKeyType, Plan } from '@leadwire/db';

/** Who is acting: the key (and the user who created it) a request authenticated with. */
export interface Actor {
  orgId: string;
  userId: string;
  apiKeyId: string;
  keyType: ApiKeyType;
  permissions: readonly string[];
  plan: Plan;
  contactBooster: number;
}
