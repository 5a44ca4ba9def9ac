import { resolve } from 'node:path';
import multipart from '@fastify/multipart';
import { type Deps, errors, type InternalActor, toPublicError } from '@leadwire/core';
import {
  authenticateInternal,
  callerOf,
  contentDisposition,
  type FileDeps,
  fileErrors,
  type FileKind,
  type FileView,
  openFile,
  openPhoto,
  scannerFor,
  storageFor,
  UPLOAD_LIMITS,
  uploadContactFile,
} from '@leadwire/core/surfaces';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './rest-surface.ts';
import { EXPOSED_HEADERS } from './v1.ts';
import { logFailure } from './log-failure.ts';

/** Room for the multipart boundaries and part headers around the file in a declared Content-Length. */
const MULTIPART_SLACK_BYTES = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Errors of the multipart parser, by its codes, in our shape; busboy's own parse errors carry no code. */
function multipartError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return fileErrors.notMultipart();
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return fileErrors.tooManyParts();
    case 'FST_PROTO_VIOLATION':
    case 'FST_MP_PREMATURE_CLOSE':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return fileErrors.malformed(err);
    default:
      if (typeof code !== 'string' && err instanceof Error && /multipart|boundary|part|form/i.test(err.message)) {
        return fileErrors.malformed(err);
      }
      return err;
  }
}

function uuidParam(value: string, name: string): string {
  if (!UUID.test(value))
    throw errors.validation([{ path: name, message: `${name} must be a UUID` }], `Validation failed: ${name} must be a UUID`);
  return value.toLowerCase();
}

/**
 * Contact photos and files over multipart, and their downloads, under /api beside the REST surface. The same
 * credentials as the rest of the internal surface (sessions or Internal keys, rate limits included) and the same
 * `{ error, code }` errors; the bytes go through the files service, which scans before it stores.
 */
export async function uploadsPlugin(app: FastifyInstance, opts: { deps: Deps }) {
  const { deps } = opts;
  const dataDir = resolve(deps.config.DATA_DIR);
  const storage = storageFor(deps.config);
  const scanner = scannerFor(deps.config);
  const spoolDir = resolve(dataDir, 'tmp', 'uploads');
  if (!scanner) deps.log.warn({}, 'CLAMAV_HOST is not set: contact file uploads are refused until a virus scanner is configured');

  // Parts beyond one file and a few small fields are refused rather than parsed; the file limit is a backstop to
  // the exact per-kind limit the files service applies while streaming.
  await app.register(multipart, {
    limits: { files: 1, fields: 10, fieldSize: 1024, parts: 12, headerPairs: 50, fileSize: UPLOAD_LIMITS.file.maxBytes + 1 },
  });

  // Preflight is answered by the REST surface's CORS for all of /api; these responses need the same allowance.
  app.addHook('onRequest', async (req, reply) => {
    if (req.headers.origin === deps.config.APP_URL) {
      void reply.headers({
        'access-control-allow-origin': deps.config.APP_URL,
        'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
      });
    }
    void reply.header('vary', 'Origin');
  });

  app.setErrorHandler((err, req, reply) => {
    const pub = toPublicError(multipartError(err));
    logFailure(req.log, err, pub, 'upload failed');
    // A refusal can come before the body was read. Closing the connection ends the upload instead of letting the
    // client push the rest of a large body; what is already in flight is drained so the answer still arrives.
    if (!req.raw.complete) {
      void reply.header('connection', 'close');
      req.raw.resume();
    }
    return sendError(reply, pub);
  });

  const actorOf = (req: FastifyRequest, reply: FastifyReply): Promise<InternalActor> =>
    authenticateInternal(
      deps,
      deps.db,
      (name) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      },
      (name, value) => void reply.header(name, value),
    );

  const upload = (kind: FileKind) => async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const actor = await actorOf(req, reply);
    const contactId = uuidParam(req.params.id, 'id');
    const fileDeps: FileDeps = { db: deps.db, storage, scanner, spoolDir, log: req.log };
    const { maxBytes, label } = UPLOAD_LIMITS[kind];
    const view = await uploadContactFile(fileDeps, actor, contactId, kind, async () => {
      // Refused from the declared length alone, before a byte of the body is read.
      const declared = Number(req.headers['content-length']);
      if (declared > maxBytes + MULTIPART_SLACK_BYTES) throw fileErrors.tooLarge(label, maxBytes);
      const part = await req.file({ limits: { fileSize: maxBytes + 1 } }).catch((err: unknown) => {
        throw multipartError(err);
      });
      return part && { filename: part.filename, declaredType: part.mimetype, stream: part.file };
    });
    // A write outside tRPC: the uploader's next reads of the contact's files must see it (read-your-writes).
    await deps.replicas?.wrote(callerOf(actor));
    return reply.status(201).send(view);
  };

  app.post('/contacts/:id/photo', upload('photo'));
  app.post('/contacts/:id/files', upload('file'));

  const download = (file: FileView, stream: NodeJS.ReadableStream, reply: FastifyReply) => {
    const inline = file.kind === 'photo';
    return reply
      .headers({
        'content-type': file.contentType,
        'content-length': String(file.size),
        'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', file.filename),
        // Uploaded bytes are never rendered as a page of ours, whatever they claim to be.
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
        'cache-control': 'private, no-store',
        etag: `"${file.sha256}"`,
      })
      .send(stream);
  };

  app.get('/files/:fileId', async (req: FastifyRequest<{ Params: { fileId: string } }>, reply) => {
    const actor = await actorOf(req, reply);
    const { file, stream } = await openFile({ db: deps.db, storage }, actor, uuidParam(req.params.fileId, 'fileId'));
    return download(file, stream, reply);
  });

  app.get('/contacts/:id/photo', async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const actor = await actorOf(req, reply);
    const { file, stream } = await openPhoto({ db: deps.db, storage }, actor, uuidParam(req.params.id, 'id'));
    return download(file, stream, reply);
  });
}
