import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Contact } from './contact.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

export const NoteSchema = defineEntity({
  name: 'Note',
  tableName: 'notes',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    author: () => p.manyToOne(User).nullable().deleteRule('set null'),
    body: p.text(),
  },
});
export class Note extends NoteSchema.class {}
NoteSchema.setClass(Note);
