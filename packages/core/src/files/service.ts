import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import type { Logger } from '../context.ts';
import { errors } from '../errors.ts';
import { fileErrors } from './errors.ts';
import { cleanFilename, cleanMediaType } from './names.ts';
import type { Scanner } from './scanner.ts';
import type { FileView } from './schemas.ts';
import { sniffImage } from './sniff.ts';
import { spool } from './spool.ts';
import * as q from './sql.ts';
import { newStorageKey, type Storage } from './storage.ts';

export const PHOTO_MAX_BYTES = 5 * 1024 * 1024;
export const FILE_MAX_BYTES = 25 * 1024 * 1024;

export type FileKind = 'photo' | 'file';

export const UPLOAD_LIMITS: Record<FileKind, { maxBytes: number; label: string }> = {
  photo: { maxBytes: PHOTO_MAX_BYTES, label: 'A contact photo' },
  file: { maxBytes: FILE_MAX_BYTES, label: 'A contact file' },
};

export interface FileDeps {
  db: Db;
  storage: Storage;
  /** Null when none is configured: files are then refused, photos accepted on their image signature. */
  scanner: Scanner | null;
  /** Private folder for uploads waiting for their scan. */
  spoolDir: string;
  log: Logger;
}

/** The file part of a request, handed over only once the request may proceed. */
export interface IncomingFile {
  filename: string | undefined;
  declaredType: string | undefined;
  stream: Readable;
}

export function toFileView(r: q.FileRow): FileView {
  return {
    id: r.id,
    contactId: r.contact_id,
    kind: r.kind,
    filename: r.filename,
    contentType: r.content_type,
    size: Number(r.size),
    sha256: r.sha256,
    uploadedBy: r.uploaded_by_id,
    createdAt: new Date(r.created_at).toISOString(),
    downloadPath: `/api/files/${r.id}`,
  };
}

async function requireContact(db: Db, actor: InternalActor, contactId: string) {
  const [row] = await db.run(q.LIVE_CONTACT, { id: contactId, orgId: actor.orgId });
  if (!row) throw errors.notFound(`No contact with id ${contactId}`);
}

/**
 * Stores a contact photo or file: checked (contact, scanner, size, image signature), spooled privately, scanned,
 * then moved to storage and recorded. Every refusal happens before storage, and the spool is always removed, so a
 * refused upload leaves no row and no bytes. `receive` is called only once the request is allowed, so nothing of
 * a request that is refused up front is read.
 */
export async function uploadContactFile(
  deps: FileDeps,
  actor: InternalActor,
  contactId: string,
  kind: FileKind,
  receive: () => Promise<IncomingFile | undefined>,
): Promise<FileView> {
  await requireContact(deps.db, actor, contactId);
  if (kind === 'file' && !deps.scanner) throw fileErrors.scannerUnavailable();
  const incoming = await receive();
  if (!incoming) throw fileErrors.missing();

  const { maxBytes, label } = UPLOAD_LIMITS[kind];
  let photoType: string | null = null;
  const spooled = await spool(incoming.stream, {
    dir: deps.spoolDir,
    maxBytes,
    tooLarge: () => fileErrors.tooLarge(label, maxBytes),
    inspectHead: (head) => {
      if (kind !== 'photo') return;
      photoType = sniffImage(head);
      if (!photoType) throw fileErrors.notAnImage();
    },
  });
  const key = newStorageKey(actor.orgId);
  try {
    if (deps.scanner) {
      const verdict = await deps.scanner.scan(createReadStream(spooled.path)).catch((err: unknown) => {
        deps.log.error({ err }, 'virus scan failed');
        throw fileErrors.scannerUnavailable(err);
      });
      if (!verdict.clean) throw fileErrors.infected(verdict.signature);
    }
    await deps.storage.put(key, createReadStream(spooled.path));
  } finally {
    await spooled.discard();
  }

  const fileId = randomUUID();
  let replaced: string[] = [];
  let row: q.FileRow | undefined;
  try {
    row = await deps.db.transaction(async (tx) => {
      const [inserted] = await tx.run(q.INSERT_FILE, {
        id: fileId,
        uploadedById: actor.userId,
        kind,
        filename: cleanFilename(incoming.filename),
        contentType: photoType ?? cleanMediaType(incoming.declaredType),
        size: spooled.size,
        sha256: spooled.sha256,
        storageKey: key,
        contactId,
        orgId: actor.orgId,
      });
      if (inserted && kind === 'photo') {
        replaced = (await tx.run(q.DELETE_PHOTOS, { contactId, orgId: actor.orgId, keepId: fileId })).map((r) => r.storage_key);
      }
      return inserted;
    });
  } catch (err) {
    await deps.storage.delete(key);
    throw err;
  }
  if (!row) {
    await deps.storage.delete(key);
    throw errors.notFound(`No contact with id ${contactId}`);
  }
  for (const old of replaced) {
    await deps.storage.delete(old).catch((err: unknown) => deps.log.warn({ err }, 'could not remove a replaced photo'));
  }
  return toFileView(row);
}

export async function listContactFiles(db: Db, actor: InternalActor, contactId: string): Promise<FileView[]> {
  await requireContact(db, actor, contactId);
  const rows = await db.run(q.LIST_FILES, { contactId, orgId: actor.orgId });
  return rows.map(toFileView);
}

async function open(deps: Pick<FileDeps, 'storage'>, row: q.FileRow | undefined, notFound: string) {
  if (!row) throw errors.notFound(notFound);
  const stream = await deps.storage.get(row.storage_key);
  if (!stream) throw errors.notFound(`${notFound}: its content is missing from storage`);
  return { file: toFileView(row), stream };
}

/** A file of the caller's organization with its bytes; another organization's id looks unknown. */
export async function openFile(deps: Pick<FileDeps, 'db' | 'storage'>, actor: InternalActor, fileId: string) {
  const [row] = await deps.db.run(q.FIND_FILE, { id: fileId, orgId: actor.orgId });
  return open(deps, row, `No file with id ${fileId}`);
}

export async function openPhoto(deps: Pick<FileDeps, 'db' | 'storage'>, actor: InternalActor, contactId: string) {
  const [row] = await deps.db.run(q.FIND_PHOTO, { contactId, orgId: actor.orgId });
  return open(deps, row, `No photo for contact ${contactId}`);
}
