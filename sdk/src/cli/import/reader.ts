/**
 * Streaming readers: one item per CSV record or JSONL line, in file order, with the line it starts on. Problems in the
 * file (malformed quoting, a wrong number of fields, bad JSON) are items too, so the caller reports them and goes on.
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { type CsvError, type Options, parse } from 'csv-parse';
import { parse as parseStrict } from 'csv-parse/sync';

export type Item =
  | { kind: 'header'; line: number; headers: string[] }
  | { kind: 'row'; line: number; values: string[] | Record<string, unknown> }
  /** `fatal`: the rest of the file cannot be read reliably, so reading stops here. */
  | { kind: 'error'; line: number; code: string; message: string; raw: string; fatal?: boolean };

// The largest CSV record accepted. A quote that is never closed makes the rest of the file one record: this bounds the
// memory that takes, and such a record is reported rather than swallowing the file.
export const MAX_RECORD_BYTES = 1 << 20;

/** Reads a CSV file: a header item first, then rows and errors. */
export async function* readCsv(path: string): AsyncGenerator<Item> {
  const skipped: Item[] = [];
  // The line the last good record ended on, as the parser saw it: a skipped record starts after it (the line count
  // csv-parse gives with an error is not reliable across CRLF and quoted line breaks).
  let lastEnd = 0;
  let stopped = false;
  const input = createReadStream(path);
  const options: Options = {
    bom: true,
    info: true,
    raw: true,
    // Lenient quoting keeps the parser in step with the lines after a malformed field; each record that holds a quote
    // is then checked strictly below, so malformed quoting is still reported, for that record alone.
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    on_record: (record: string[], context: { lines: number }) => {
      lastEnd = context.lines;
      return record;
    },
    on_skip: (err: CsvError | undefined, raw: string | undefined) => {
      if (!err || stopped) return undefined;
      const text = raw ?? (err as unknown as { raw?: string }).raw ?? '';
      const tooLarge = err.code === 'CSV_MAX_RECORD_SIZE';
      skipped.push({
        kind: 'error',
        line: lastEnd + 1 + (/^[\r\n]+/.exec(text)?.[0].match(/\r\n|\r|\n/g)?.length ?? 0),
        code: tooLarge ? 'csv_record_too_large' : err.code === 'CSV_QUOTE_NOT_CLOSED' ? 'csv_unclosed_quote' : 'csv_parse_error',
        message: tooLarge
          ? `a record longer than ${MAX_RECORD_BYTES} bytes (a quote never closed?): the rest of the file was not read`
          : err.message,
        // Only the start of an over-long record: enough to find it in the file.
        raw: tooLarge ? `${trimNewlines(text).slice(0, 1000)}…` : trimNewlines(text),
        fatal: tooLarge,
      });
      if (tooLarge) {
        stopped = true;
        input.unpipe(parser);
        input.destroy();
        parser.end();
      }
      return undefined;
    },
  };
  const parser = parse(options);
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let width = -1;
  try {
    for await (const rec of parser as AsyncIterable<{ record: string[]; info: { lines: number }; raw: string }>) {
      const line = startLine(rec.info.lines, rec.raw);
      // The parser reports skipped records through a callback as it meets them, before the records after them, so
      // every problem on an earlier line is known by now: yield them first, in file order.
      while (skipped.length && skipped[0]!.line <= line) yield skipped.shift()!;
      if (skipped.some((s) => s.kind === 'error' && s.fatal)) break;
      const raw = trimNewlines(rec.raw);
      if (width < 0) {
        width = rec.record.length;
        yield { kind: 'header', line, headers: rec.record.map((h) => h.trim()) };
        continue;
      }
      if (raw.includes('"') && !quotedStrictly(raw)) {
        yield {
          kind: 'error',
          line,
          code: 'csv_malformed_quotes',
          message: 'malformed quoting: a quote inside an unquoted field, or text after a closing quote',
          raw,
        };
      } else if (rec.record.length !== width) {
        yield {
          kind: 'error',
          line,
          code: 'csv_field_count',
          message: `the row has ${rec.record.length} fields and the header ${width}`,
          raw,
        };
      } else {
        yield { kind: 'row', line, values: rec.record };
      }
    }
    yield* skipped;
  } finally {
    input.destroy();
    parser.destroy();
  }
}

function trimNewlines(text: string): string {
  return text.replace(/^[\r\n]+|[\r\n]+$/g, '');
}

function quotedStrictly(raw: string): boolean {
  try {
    parseStrict(raw, { relax_column_count: true });
    return true;
  } catch {
    return false;
  }
}

/** The line a record starts on, from the line it ends on and its raw text (which may start with blank lines skipped). */
function startLine(endLine: number, raw: string): number {
  const body = raw.replace(/^[\r\n]+/, '').replace(/\r?\n$|\r$/, '');
  return endLine - (body.match(/\r\n|\r|\n/g)?.length ?? 0);
}

/** Reads a JSONL file: one object per non-blank line; a line over MAX_RECORD_BYTES is reported, not buffered. */
export async function* readJsonl(path: string): AsyncGenerator<Item> {
  const input = createReadStream(path);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let line = 0;
  // Set while skipping the remainder of an over-long line: the start of it, for the failed file.
  let tooLong: string | undefined;
  const lineItems = function* (text: string): Generator<Item> {
    line++;
    if (tooLong !== undefined) {
      yield {
        kind: 'error',
        line,
        code: 'json_line_too_long',
        message: `a line longer than ${MAX_RECORD_BYTES} bytes`,
        raw: `${tooLong}…`,
      };
      tooLong = undefined;
      return;
    }
    // A byte-order mark is not JSON, but editors on Windows add one.
    yield* jsonItem(line === 1 ? text.replace(/^\uFEFF/, '') : text, line);
  };
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const parts = (rest + decoder.write(chunk)).split('\n');
      rest = parts.pop()!;
      for (const text of parts) yield* lineItems(text.replace(/\r$/, ''));
      if (rest.length > MAX_RECORD_BYTES) {
        tooLong ??= rest.slice(0, 1000);
        rest = '';
      }
    }
    rest += decoder.end();
    if (rest || tooLong !== undefined) yield* lineItems(rest.replace(/\r$/, ''));
  } finally {
    input.destroy();
  }
}

function* jsonItem(text: string, line: number): Generator<Item> {
  if (!text.trim()) return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    yield { kind: 'error', line, code: 'json_invalid', message: `not valid JSON: ${(err as Error).message}`, raw: text };
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    yield { kind: 'error', line, code: 'json_not_object', message: 'each line must be a JSON object', raw: text };
    return;
  }
  yield { kind: 'row', line, values: value as Record<string, unknown> };
}
