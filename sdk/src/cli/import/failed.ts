/**
 * The failed-rows file: each row that was not imported, with its original values, its line and the error. CSV input
 * gives a CSV with the input's columns plus import_line, import_error_code, import_error_message and import_raw (the
 * record's text when it could not be split into columns); the importer ignores those columns, so a corrected failed
 * file imports as it is. JSONL input gives JSONL: `{"line", "error": {code, message}, "row" | "raw"}`.
 */
import { open, rm, truncate } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { FAILED_FILE_COLUMNS } from './mapping.ts';

export interface FailedRow {
  line: number;
  code: string;
  message: string;
  /** The parsed values (CSV cells or the JSON object), when the record could be parsed. */
  values?: string[] | Record<string, unknown>;
  /** The record's text, when it could not be parsed. */
  raw?: string;
}

/** One CSV field, quoted when it must be (RFC 4180). */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value !== value.trim() ? `"${value.replaceAll('"', '""')}"` : value;
}

export class FailedFile {
  readonly path: string;
  private readonly format: 'csv' | 'jsonl';
  private headers: string[] = [];
  private handle: FileHandle | undefined;
  private bytes: number;

  /** `bytes`: the length to keep of an existing file (a resume); 0 starts a new file. */
  private constructor(path: string, format: 'csv' | 'jsonl', bytes: number) {
    this.path = path;
    this.format = format;
    this.bytes = bytes;
  }

  static async open(path: string, format: 'csv' | 'jsonl', resumeBytes: number): Promise<FailedFile> {
    if (resumeBytes > 0) {
      // Anything after the last chunk recorded as done belongs to a chunk that will be sent again.
      try {
        await truncate(path, resumeBytes);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        resumeBytes = 0;
      }
    } else {
      // A new import replaces the failed file of an earlier one, rather than leaving it to be mistaken for this one's.
      await rm(path, { force: true });
    }
    return new FailedFile(path, format, resumeBytes);
  }

  setHeaders(headers: string[]): void {
    this.headers = headers;
  }

  /** Appends rows; returns the file's length afterwards. The file is created on the first failure only. */
  async append(rows: FailedRow[]): Promise<number> {
    if (rows.length === 0) return this.bytes;
    let text = '';
    if (!this.handle) {
      this.handle = await open(this.path, 'a');
      if (this.bytes === 0 && this.format === 'csv') text += `${[...this.headers, ...FAILED_FILE_COLUMNS].map(csvField).join(',')}\n`;
    }
    for (const row of rows) text += this.format === 'csv' ? this.csvLine(row) : this.jsonLine(row);
    await this.handle.write(text);
    this.bytes += Buffer.byteLength(text);
    return this.bytes;
  }

  get size(): number {
    return this.bytes;
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }

  private csvLine(row: FailedRow): string {
    const cells = Array.isArray(row.values) ? this.headers.map((_, i) => row.values?.[i as never] ?? '') : this.headers.map(() => '');
    return `${[...cells, String(row.line), row.code, row.message, row.raw ?? ''].map((v) => csvField(String(v))).join(',')}\n`;
  }

  private jsonLine(row: FailedRow): string {
    const entry = {
      line: row.line,
      error: { code: row.code, message: row.message },
      ...(row.values ? { row: row.values } : { raw: row.raw ?? '' }),
    };
    return `${JSON.stringify(entry)}\n`;
  }
}
