import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClamdScanner, parseClamdReply } from './clamav.ts';
import { EICAR, type FakeClamd, startFakeClamd } from './fake-clamd.test-support.ts';
import { ScannerError } from './scanner.ts';

describe('parseClamdReply', () => {
  it('reads OK and FOUND verdicts, with or without the NUL and a session id', () => {
    expect(parseClamdReply('stream: OK\0')).toEqual({ clean: true });
    expect(parseClamdReply('stream: Win.Test.EICAR_HDB-1 FOUND\0')).toEqual({ clean: false, signature: 'Win.Test.EICAR_HDB-1' });
    expect(parseClamdReply('1: stream: OK\n')).toEqual({ clean: true });
  });
  it('treats anything else as no verdict', () => {
    expect(() => parseClamdReply('INSTREAM size limit exceeded. ERROR\0')).toThrow(ScannerError);
    expect(() => parseClamdReply('stream: lstat() failed ERROR')).toThrow(ScannerError);
    expect(() => parseClamdReply('')).toThrow(ScannerError);
  });
});

describe('ClamdScanner against a clamd speaking INSTREAM over TCP', () => {
  let clamd: FakeClamd;
  beforeAll(async () => {
    clamd = await startFakeClamd();
  });
  afterAll(async () => clamd?.close());
  beforeEach(() => {
    clamd.mode = 'scan';
    clamd.scans = [];
  });
  const scanner = (opts: { chunkBytes?: number; timeoutMs?: number } = {}) =>
    new ClamdScanner({ host: clamd.host, port: clamd.port, ...opts });

  it('frames the stream in length-prefixed chunks and reports clean data clean', async () => {
    const data = Buffer.alloc(10_000, 7);
    expect(await scanner({ chunkBytes: 4096 }).scan(Readable.from([data.subarray(0, 5000), data.subarray(5000)]))).toEqual({ clean: true });
    expect(clamd.scans).toHaveLength(1);
    expect(clamd.scans[0]!.chunkLengths).toEqual([4096, 904, 4096, 904]);
    expect(clamd.scans[0]!.data.equals(data)).toBe(true);
  });

  it('reports the signature of infected data', async () => {
    expect(await scanner().scan(Readable.from([Buffer.from(EICAR)]))).toEqual({ clean: false, signature: 'Eicar-Test-Signature' });
  });

  it('scans an empty stream', async () => {
    expect(await scanner().scan(Readable.from([]))).toEqual({ clean: true });
    expect(clamd.scans[0]!.data.length).toBe(0);
  });

  it('fails, never answers clean, when clamd errors, hangs up, stalls or is not there', async () => {
    clamd.mode = 'error';
    await expect(scanner().scan(Readable.from([Buffer.from('x')]))).rejects.toThrow(/no verdict/);
    clamd.mode = 'hangup';
    await expect(scanner().scan(Readable.from([Buffer.from('x')]))).rejects.toThrow(ScannerError);
    clamd.mode = 'silent';
    await expect(scanner({ timeoutMs: 200 }).scan(Readable.from([Buffer.from('x')]))).rejects.toThrow(ScannerError);
    const closed = new ClamdScanner({ host: '127.0.0.1', port: 1 });
    await expect(closed.scan(Readable.from([Buffer.from('x')]))).rejects.toThrow(ScannerError);
  });
});
