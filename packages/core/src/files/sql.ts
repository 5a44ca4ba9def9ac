import { qb, sql, statement } from '@leadwire/db';

/** Statements of the files service, in one place. */

export const LIVE_CONTACT = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('contacts').select('id').where('id', '=', p.id).where('organization_id', '=', p.orgId).where('deleted_at', 'is', null),
);

const FILE = [
  'id',
  'contact_id',
  'kind',
  'filename',
  'content_type',
  'size',
  'sha256',
  'uploaded_by_id',
  'created_at',
  'storage_key',
] as const;
const F_FILE = FILE.map((c) => `f.${c}` as const);

/** Inserts only while the contact is live and the caller's, so a contact trashed during the upload gets no file. */
export const INSERT_FILE = statement<{
  id: string;
  uploadedById: string;
  kind: 'photo' | 'file';
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  storageKey: string;
  contactId: string;
  orgId: string;
}>()((p) =>
  qb
    .insertInto('contact_files')
    .columns(['id', 'organization_id', 'contact_id', 'uploaded_by_id', 'kind', 'filename', 'content_type', 'size', 'sha256', 'storage_key'])
    .expression(
      qb
        .selectFrom('contacts as c')
        .select((eb) => [
          eb.val(p.id).as('id'),
          'c.organization_id',
          'c.id as contact_id',
          eb.val(p.uploadedById).as('uploaded_by_id'),
          eb.val(p.kind).as('kind'),
          eb.val(p.filename).as('filename'),
          eb.val(p.contentType).as('content_type'),
          eb.val(p.size).as('size'),
          eb.val(p.sha256).as('sha256'),
          eb.val(p.storageKey).as('storage_key'),
        ])
        .where('c.id', '=', p.contactId)
        .where('c.organization_id', '=', p.orgId)
        .where('c.deleted_at', 'is', null),
    )
    .returning(FILE),
);
export type FileRow = NonNullable<(typeof INSERT_FILE)['row']>;

/** A contact has one photo: a new one replaces the old, whose bytes are removed after commit. */
export const DELETE_PHOTOS = statement<{ contactId: string; orgId: string; keepId: string }>()((p) =>
  qb
    .deleteFrom('contact_files')
    .where('contact_id', '=', p.contactId)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', sql.lit('photo'))
    .where('id', '<>', p.keepId)
    .returning('storage_key'),
);

export const LIST_FILES = statement<{ contactId: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contact_files as f')
    .select(F_FILE)
    .where('f.contact_id', '=', p.contactId)
    .where('f.organization_id', '=', p.orgId)
    .where('f.kind', '=', sql.lit('file'))
    .orderBy('f.created_at', 'desc')
    .orderBy('f.id', 'desc'),
);

/** Files of a trashed contact are out of reach until it is restored. */
export const FIND_FILE = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contact_files as f')
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'f.contact_id').on('c.deleted_at', 'is', null))
    .select(F_FILE)
    .where('f.id', '=', p.id)
    .where('f.organization_id', '=', p.orgId),
);

export const FIND_PHOTO = statement<{ contactId: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contact_files as f')
    .innerJoin('contacts as c', (j) => j.onRef('c.id', '=', 'f.contact_id').on('c.deleted_at', 'is', null))
    .select(F_FILE)
    .where('f.contact_id', '=', p.contactId)
    .where('f.organization_id', '=', p.orgId)
    .where('f.kind', '=', sql.lit('photo'))
    .orderBy('f.created_at', 'desc')
    .limit(sql.lit(1)),
);
