/** Statements of the files service, in one place. */

export const LIVE_CONTACT = `select id from contacts where id = ? and organization_id = ? and deleted_at is null`;

const FILE_COLUMNS = `f.id, f.contact_id, f.kind, f.filename, f.content_type, f.size, f.sha256, f.uploaded_by_id, f.created_at, f.storage_key`;

/** Inserts only while the contact is live and the caller's, so a contact trashed during the upload gets no file. */
export const INSERT_FILE = `
insert into contact_files (id, organization_id, contact_id, uploaded_by_id, kind, filename, content_type, size, sha256, storage_key)
select ?, c.organization_id, c.id, ?, ?, ?, ?, ?, ?, ? from contacts c
where c.id = ? and c.organization_id = ? and c.deleted_at is null
returning id, contact_id, kind, filename, content_type, size, sha256, uploaded_by_id, created_at, storage_key`;

/** A contact has one photo: a new one replaces the old, whose bytes are removed after commit. */
export const DELETE_PHOTOS = `
delete from contact_files where contact_id = ? and organization_id = ? and kind = 'photo' and id <> ?
returning storage_key`;

export const LIST_FILES = `
select ${FILE_COLUMNS} from contact_files f
where f.contact_id = ? and f.organization_id = ? and f.kind = 'file'
order by f.created_at desc, f.id desc`;

/** Files of a trashed contact are out of reach until it is restored. */
export const FIND_FILE = `
select ${FILE_COLUMNS} from contact_files f
join contacts c on c.id = f.contact_id and c.deleted_at is null
where f.id = ? and f.organization_id = ?`;

export const FIND_PHOTO = `
select ${FILE_COLUMNS} from contact_files f
join contacts c on c.id = f.contact_id and c.deleted_at is null
where f.contact_id = ? and f.organization_id = ? and f.kind = 'photo'
order by f.created_at desc
limit 1`;

export interface FileRow {
  id: string;
  contact_id: string;
  kind: 'photo' | 'file';
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  uploaded_by_id: string | null;
  created_at: Date | string;
  storage_key: string;
}
