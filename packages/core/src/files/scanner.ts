import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import { ClamdScanner } from './clamav.ts';

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

/** The configured scanner, or null when none is (contact files are then refused; see config CLAMAV_HOST). */
export function scannerFor(config: Config): Scanner | null {
  if (!config.CLAMAV_HOST) return null;
  return new ClamdScanner({ host: config.CLAMAV_HOST, port: config.CLAMAV_PORT, timeoutMs: config.CLAMAV_TIMEOUT_MS });
}
