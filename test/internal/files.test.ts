import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InternalRouter } from '@leadwire/core';
import { EICAR, type FakeClamd, startFakeClamd } from '#core/files/fake-clamd.test-support.ts';
import { createTRPCClient, httpLink } from '@trpc/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';

const MB = 1024 * 1024;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-and-some-pixels')]);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00tiny', 'latin1');

let t: TestApp;
let clamd: FakeClamd;
let dataDir: string;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
let other: Awaited<ReturnType<TestApp['newOrg']>>;

beforeAll(async () => {
  clamd = await startFakeClamd();
  dataDir = await mkdtemp(join(tmpdir(), 'leadwire-files-'));
  t = await initTestApp({ CLAMAV_HOST: clamd.host, CLAMAV_PORT: String(clamd.port), DATA_DIR: dataDir });
  [org, other] = await Promise.all([t.newOrg(), t.newOrg()]);
});
afterAll(async () => {
  await t?.close();
  await clamd?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  clamd.mode = 'scan';
});

const client = (key: string) =>
  createTRPCClient<InternalRouter>({ links: [httpLink({ url: `${t.origin}/api/trpc`, headers: { authorization: `Bearer ${key}` } })] });

async function newContact(orgId: string): Promise<string> {
  const [row] = await t.sql<{ id: string }>(`insert into contacts (organization_id, email) values (?, ?) returning id`, [
    orgId,
    `c-${Math.random().toString(36).slice(2)}@example.com`,
  ]);
  return row!.id;
}

/** Every file under DATA_DIR, spool included: what a refused upload must not add to. */
async function filesOnDisk(): Promise<string[]> {
  const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

async function rowsFor(contactId: string): Promise<number> {
  const [row] = await t.sql<{ n: string }>(`select count(*) as n from contact_files where contact_id = ?`, [contactId]);
  return Number(row!.n);
}

async function upload(path: string, key: string | undefined, file?: { bytes: Buffer | string; name?: string; type?: string }) {
  const form = new FormData();
  form.append('note', 'a field before the file');
  if (file)
    form.append(
      'file',
      new Blob([typeof file.bytes === 'string' ? file.bytes : new Uint8Array(file.bytes)], {
        type: file.type ?? 'application/octet-stream',
      }),
      file.name ?? 'upload.bin',
    );
  const res = await fetch(`${t.origin}/api${path}`, { method: 'POST', body: form, headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

const get = (path: string, key: string) => fetch(`${t.origin}/api${path}`, { headers: { authorization: `Bearer ${key}` } });

describe('contact files', () => {
  it('stores a clean file after scanning it, lists it (typed and REST) and serves it back', async () => {
    const contactId = await newContact(org.orgId);
    const bytes = Buffer.from('Quarterly numbers, all fine.\n');
    const scansBefore = clamd.scans.length;
    const r = await upload(`/contacts/${contactId}/files`, org.internalKey, { bytes, name: 'report.txt', type: 'text/plain' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      contactId,
      kind: 'file',
      filename: 'report.txt',
      contentType: 'text/plain',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      uploadedBy: org.userId,
      downloadPath: `/api/files/${r.body.id}`,
    });
    expect(clamd.scans.length).toBe(scansBefore + 1);
    expect(clamd.scans.at(-1)!.data.equals(bytes)).toBe(true);

    const typed = await client(org.internalKey).files.list.query({ id: contactId });
    expect(typed.files.map((f) => f.id)).toEqual([r.body.id]);
    const rest = await get(`/contacts/${contactId}/files`, org.internalKey);
    expect(rest.status).toBe(200);
    expect((await rest.json()).files).toEqual(typed.files);

    const download = await get(`/files/${r.body.id}`, org.internalKey);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="report.txt"/);
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('refuses an infected file with 422 file_infected and keeps no row and no bytes', async () => {
    const contactId = await newContact(org.orgId);
    const before = await filesOnDisk();
    const r = await upload(`/contacts/${contactId}/files`, org.internalKey, { bytes: `prefix ${EICAR} suffix`, name: 'eicar.com' });
    expect(r).toMatchObject({ status: 422, body: { code: 'file_infected', signature: 'Eicar-Test-Signature' } });
    expect(r.body.error).toMatch(/Eicar-Test-Signature/);
    expect(await rowsFor(contactId)).toBe(0);
    expect(await filesOnDisk()).toEqual(before);
  });

  it('refuses with 503 scanner_unavailable when the scanner fails, storing nothing', async () => {
    const contactId = await newContact(org.orgId);
    const before = await filesOnDisk();
    for (const mode of ['error', 'hangup'] as const) {
      clamd.mode = mode;
      const r = await upload(`/contacts/${contactId}/files`, org.internalKey, { bytes: 'harmless', name: 'a.txt' });
      expect(r).toMatchObject({ status: 503, body: { code: 'scanner_unavailable' } });
    }
    expect(await rowsFor(contactId)).toBe(0);
    expect(await filesOnDisk()).toEqual(before);
  });

  it('refuses an over-size file from its declared length with 413, before reading or scanning it', async () => {
    const contactId = await newContact(org.orgId);
    const before = await filesOnDisk();
    const scansBefore = clamd.scans.length;
    const boundary = 'leadwire-declared';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const fileBytes = 40 * MB;
    // node:http rather than fetch, to see how much of the declared body had been sent when the answer came.
    const { status, body, written } = await new Promise<{ status: number; body: any; written: number }>((resolve, reject) => {
      let written = 0;
      const req = request(`${t.origin}/api/contacts/${contactId}/files`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${org.internalKey}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + fileBytes + tail.length,
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const sentAtAnswer = written;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), written: sentAtAnswer });
        });
      });
      const chunk = Buffer.alloc(64 * 1024);
      const pump = () => {
        while (written < fileBytes && !req.destroyed) {
          const piece = chunk.subarray(0, Math.min(chunk.length, fileBytes - written));
          written += piece.length;
          if (!req.write(piece)) return void req.once('drain', pump);
        }
        if (written >= fileBytes) req.end(tail);
      };
      req.write(head);
      pump();
    });
    expect(status).toBe(413);
    expect(body).toMatchObject({ code: 'file_too_large', maxBytes: 25 * MB });
    // Socket buffers take some; reading to the limit would have taken all 25 MB.
    expect(written).toBeLessThan(8 * MB);
    expect(clamd.scans.length).toBe(scansBefore);
    expect(await rowsFor(contactId)).toBe(0);
    expect(await filesOnDisk()).toEqual(before);
  });

  it('cuts off an over-size streamed upload at the limit instead of reading it to its end', async () => {
    const contactId = await newContact(org.orgId);
    const before = await filesOnDisk();
    const boundary = 'leadwire-test-boundary';
    const total = 100 * MB;
    let sent = 0;
    const chunk = new Uint8Array(256 * 1024);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
        );
      },
      pull(controller) {
        if (sent >= total) {
          controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
          return controller.close();
        }
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    // No Content-Length: only the streaming limit can stop this one.
    const res = await fetch(`${t.origin}/api/contacts/${contactId}/files`, {
      method: 'POST',
      body,
      duplex: 'half',
      headers: { authorization: `Bearer ${org.internalKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('file_too_large');
    expect(sent).toBeLessThan(total / 2);
    expect(await rowsFor(contactId)).toBe(0);
    expect(await filesOnDisk()).toEqual(before);
  });

  it('answers a body that is not multipart with 415, and a form without a file with 400 file_missing', async () => {
    const contactId = await newContact(org.orgId);
    const json = await fetch(`${t.origin}/api/contacts/${contactId}/files`, {
      method: 'POST',
      body: JSON.stringify({ file: 'nope' }),
      headers: { authorization: `Bearer ${org.internalKey}`, 'content-type': 'application/json' },
    });
    expect(json.status).toBe(415);
    expect(await json.json()).toMatchObject({ code: 'unsupported_media_type' });
    expect(await upload(`/contacts/${contactId}/files`, org.internalKey)).toMatchObject({ status: 400, body: { code: 'file_missing' } });
  });
});

describe('contact photos', () => {
  it('accepts an image by its signature, serves it inline, and a new photo replaces the old one', async () => {
    const contactId = await newContact(org.orgId);
    const first = await upload(`/contacts/${contactId}/photo`, org.internalKey, { bytes: PNG, name: 'me.png', type: 'text/plain' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ kind: 'photo', contentType: 'image/png', size: PNG.length });
    const afterFirst = await filesOnDisk();

    const second = await upload(`/contacts/${contactId}/photo`, org.internalKey, { bytes: GIF, name: 'me.gif', type: 'image/gif' });
    expect(second.status).toBe(201);
    expect(await rowsFor(contactId)).toBe(1);
    expect((await filesOnDisk()).length).toBe(afterFirst.length);

    const photo = await get(`/contacts/${contactId}/photo`, org.internalKey);
    expect(photo.status).toBe(200);
    expect(photo.headers.get('content-type')).toBe('image/gif');
    expect(photo.headers.get('content-disposition')).toMatch(/^inline/);
    expect(Buffer.from(await photo.arrayBuffer()).equals(GIF)).toBe(true);
    expect((await get(`/files/${first.body.id}`, org.internalKey)).status).toBe(404);
    // The photo is not one of the contact's files.
    expect((await client(org.internalKey).files.list.query({ id: contactId })).files).toEqual([]);
  });

  it('refuses a non-image declared as an image with 415, and an image over 5 MB with 413, storing nothing', async () => {
    const contactId = await newContact(org.orgId);
    const before = await filesOnDisk();
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    const fake = await upload(`/contacts/${contactId}/photo`, org.internalKey, { bytes: svg, name: 'me.png', type: 'image/png' });
    expect(fake).toMatchObject({ status: 415, body: { code: 'unsupported_file_type' } });
    const big = Buffer.concat([PNG, Buffer.alloc(5 * MB)]);
    expect(await upload(`/contacts/${contactId}/photo`, org.internalKey, { bytes: big, type: 'image/png' })).toMatchObject({
      status: 413,
      body: { code: 'file_too_large', maxBytes: 5 * MB },
    });
    expect(await rowsFor(contactId)).toBe(0);
    expect(await filesOnDisk()).toEqual(before);
  });

  it('scans photos too when a scanner is configured', async () => {
    const contactId = await newContact(org.orgId);
    const r = await upload(`/contacts/${contactId}/photo`, org.internalKey, {
      bytes: Buffer.concat([PNG, Buffer.from(EICAR)]),
      type: 'image/png',
    });
    expect(r).toMatchObject({ status: 422, body: { code: 'file_infected' } });
    expect(await rowsFor(contactId)).toBe(0);
  });
});

describe('who may reach contact files', () => {
  it('keeps organizations apart: another tenant cannot upload, list or download', async () => {
    const contactId = await newContact(org.orgId);
    const stored = await upload(`/contacts/${contactId}/files`, org.internalKey, { bytes: 'private', name: 'p.txt' });
    expect(stored.status).toBe(201);

    expect(await upload(`/contacts/${contactId}/files`, other.internalKey, { bytes: 'x', name: 'x.txt' })).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await upload(`/contacts/${contactId}/photo`, other.internalKey, { bytes: PNG })).toMatchObject({ status: 404 });
    expect((await get(`/contacts/${contactId}/files`, other.internalKey)).status).toBe(404);
    expect((await get(`/files/${stored.body.id}`, other.internalKey)).status).toBe(404);
    expect((await get(`/files/${stored.body.id}`, org.internalKey)).status).toBe(200);
    expect(await rowsFor(contactId)).toBe(1);
  });

  it('needs internal credentials: none is 401, a Public API key 403 wrong_api_surface', async () => {
    const contactId = await newContact(org.orgId);
    expect(await upload(`/contacts/${contactId}/files`, undefined, { bytes: 'x' })).toMatchObject({
      status: 401,
      body: { code: 'unauthorized' },
    });
    expect(await upload(`/contacts/${contactId}/files`, org.publicKey, { bytes: 'x' })).toMatchObject({
      status: 403,
      body: { code: 'wrong_api_surface' },
    });
    const anon = await fetch(`${t.origin}/api/files/${contactId}`);
    expect(anon.status).toBe(401);
    expect(await rowsFor(contactId)).toBe(0);
  });

  it('hides the files of a trashed contact', async () => {
    const contactId = await newContact(org.orgId);
    const stored = await upload(`/contacts/${contactId}/files`, org.internalKey, { bytes: 'kept', name: 'k.txt' });
    await t.sql(`update contacts set deleted_at = now() where id = ?`, [contactId]);
    expect((await get(`/files/${stored.body.id}`, org.internalKey)).status).toBe(404);
    expect(await upload(`/contacts/${contactId}/files`, org.internalKey, { bytes: 'more' })).toMatchObject({ status: 404 });
  });
});

describe('without a virus scanner configured', () => {
  let bare: TestApp;
  let bareDir: string;
  beforeAll(async () => {
    bareDir = await mkdtemp(join(tmpdir(), 'leadwire-files-bare-'));
    bare = await initTestApp({ DATA_DIR: bareDir });
  });
  afterAll(async () => {
    await bare?.close();
    if (bareDir) await rm(bareDir, { recursive: true, force: true });
  });

  it('refuses contact files with 503 scanner_unavailable and accepts photos on their image signature', async () => {
    const o = await bare.newOrg();
    const [c] = await bare.sql<{ id: string }>(`insert into contacts (organization_id) values (?) returning id`, [o.orgId]);
    const form = (bytes: Buffer | string) => {
      const f = new FormData();
      f.append('file', new Blob([typeof bytes === 'string' ? bytes : new Uint8Array(bytes)]), 'f.bin');
      return f;
    };
    const post = (path: string, bytes: Buffer | string) =>
      fetch(`${bare.origin}/api/contacts/${c!.id}${path}`, {
        method: 'POST',
        body: form(bytes),
        headers: { authorization: `Bearer ${o.internalKey}` },
      });
    const file = await post('/files', 'text');
    expect(file.status).toBe(503);
    expect(await file.json()).toMatchObject({ code: 'scanner_unavailable' });
    expect((await post('/photo', PNG)).status).toBe(201);
    expect((await post('/photo', 'not an image')).status).toBe(415);
  });
});
