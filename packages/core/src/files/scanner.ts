import type { Readable } from 'node:stream';

export type ScanResult = { clean: true } | { clean: false; signature: string };

/** Scans a stream for malware. Rejects with ScannerError when it cannot give an answer; never guesses "clean". */
export interface Scanner {
  scan(data: Readable): Promise<ScanResult>;
}

export class ScannerError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ScannerError';
  }
}
