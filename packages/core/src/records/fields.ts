import { jsonObject } from '../validation/index.ts';

/* Input fields that more than one record type takes (contacts, companies), with one description for the contracts. */

export const CustomSchema = jsonObject({ maxKeys: 200, label: 'custom' }).meta({
  description:
    'Free-form key/value data, merged key by key into what is stored; a key sent as null is removed. At most 200 keys of 1-100 characters, string values up to 10,000 characters, 8 levels deep; no NUL, unpaired surrogate or `__proto__` key anywhere.',
  example: { plan: 'trial' },
});
