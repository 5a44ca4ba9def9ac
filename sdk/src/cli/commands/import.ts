import { access, constants, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { positionals } from '../args.ts';
import type { Command } from '../context.ts';
import { CliError, ExitCode, UsageError } from '../exit-codes.ts';
import { messages } from '../output.ts';
import {
  checkpointPathOf,
  fingerprintOf,
  loadCheckpoint,
  newCheckpoint,
  optionsHashOf,
  removeCheckpoint,
  saveCheckpoint,
} from '../import/checkpoint.ts';
import { FailedFile, type FailedRow } from '../import/failed.ts';
import { CONTACT_FIELDS, parseMapOption } from '../import/mapping.ts';
import { readCsv, readJsonl } from '../import/reader.ts';
import { CHUNK_ROWS, runImport, type SendChunk } from '../import/run.ts';
import { connectionOf, connectionUsage, parseCommand } from '../options.ts';

const USAGE = `Usage: leadwire import <file.csv | file.jsonl> [options]

Creates or updates contacts from a CSV file (with a header row) or a JSONL file (one JSON object
per line), ${CHUNK_ROWS} rows per request through /v1/contacts/batch-upsert. Needs a Public API key with
contacts:write.

Columns map to contact fields by name, ignoring case, spaces, dashes and underscores
("First Name", first_name and firstName all mean firstName): ${CONTACT_FIELDS.join(', ')}
(also jobTitle for title, domain for companyDomain). Tags split on ";" or ",". Columns named
custom.<key> go into custom. Other columns are ignored with a warning; --map them. Empty cells
are left out, so they never clear a stored value.

Rows that fail (invalid values, malformed CSV, bad JSON) are written with their line, the error
and their original values to <file>.failed.csv (<file>.failed.jsonl for JSONL). Re-running is
safe: contacts are matched by email (or name and company), and an interrupted import (Ctrl-C,
a lost connection) resumes after the last chunk done, from <file>.leadwire-import.json.

Options:
  --map <pairs>       "Header=field,Other=custom.key,Unwanted=-" (fields as above; - ignores)
  --failed <path>     where to write the failed rows (default <file>.failed.csv / .failed.jsonl)
  --source <source>   the source of contacts created (letters, digits, . - _; default api),
                      unless a row has its own source column
  --dry-run           check every row by the server's rules and write the failed file; nothing
                      is sent and no key is needed (whether a companyDomain names an existing
                      company is for the server to say)
${connectionUsage('public', 22)}

Prints a summary (created, updated, failed, skipped) on stderr and as JSON on stdout.
Exit codes: 0 all rows imported; 1 some rows failed (see the failed file); 2 usage error;
3 key missing or refused; 4 server or network error (run again to resume); 130 interrupted.

Example:
  leadwire import contacts.csv --map "E-mail=email,Company=companyDomain" --source trade-show
`;

const SOURCE = /^[A-Za-z0-9._-]{1,40}$/;
// What the dry run prints of each kind of problem before it only counts.
const DRY_RUN_SHOWN = 20;

export const importCommand: Command = {
  name: 'import',
  summary: 'create or update contacts from a CSV or JSONL file',
  usage: USAGE,
  async run(ctx, argv) {
    const { values, positionals: rest } = parseCommand(argv, {
      map: { type: 'string' },
      failed: { type: 'string' },
      source: { type: 'string' },
      'dry-run': { type: 'boolean' },
    });
    const [file] = positionals(rest, ['file']);
    const path = resolve(ctx.cwd, file!);
    const format = /\.(jsonl|ndjson)$/i.test(path) ? 'jsonl' : /\.csv$/i.test(path) ? 'csv' : undefined;
    if (!format) throw new UsageError(`${file!}: the file name must end in .csv or .jsonl (or .ndjson)`);
    const overrides = parseMapOption(values.map);
    if (values.source !== undefined && !SOURCE.test(values.source))
      throw new UsageError('--source takes letters, digits, dot, dash and underscore, at most 40 characters');
    try {
      await access(path, constants.R_OK);
      if (!(await stat(path)).isFile()) throw new Error('not a file');
    } catch {
      throw new UsageError(`cannot read ${file!}`);
    }
    // Before the hashing pass, which takes seconds on a large file: a missing key should not wait for it.
    const credentials = values['dry-run'] ? undefined : await connectionOf(ctx, values, 'public');
    const say = messages(ctx);
    const fingerprint = await fingerprintOf(path, ctx.signal);
    const items = format === 'csv' ? readCsv(path) : readJsonl(path);
    const estimate = Math.max(fingerprint.lines - (format === 'csv' ? 1 : 0), 0);

    const failedPath = values.failed ? resolve(ctx.cwd, values.failed) : `${path}.failed.${format}`;
    if (values['dry-run']) {
      try {
        await access(dirname(failedPath), constants.W_OK);
      } catch (err) {
        throw new UsageError(`cannot write the failed rows to ${failedPath}: ${(err as Error).message}`);
      }
      let shown = 0;
      const onDryRunFailure = (row: FailedRow) => {
        if (shown++ < DRY_RUN_SHOWN) say.info(`line ${row.line}: ${row.code}: ${row.message}`);
      };
      const failed = await FailedFile.open(failedPath, format, 0);
      const { totals } = await runImport({ ctx, items, overrides, source: values.source, estimate, onDryRunFailure, failed });
      if (shown > DRY_RUN_SHOWN) say.info(`… and ${shown - DRY_RUN_SHOWN} more`);
      const failedFile = totals.failed > 0 ? failedPath : null;
      say.info(
        `Dry run: ${totals.created} rows would be sent, ${totals.failed} would fail${failedFile ? ` (see ${failedFile})` : ''}; nothing was sent.`,
      );
      ctx.stdout.write(`${JSON.stringify({ dryRun: true, rows: totals.created, failed: totals.failed, failedFile })}\n`);
      return totals.failed > 0 ? ExitCode.partial : ExitCode.ok;
    }

    const { apiKey, baseUrl } = credentials!;
    const cpPath = checkpointPathOf(path);
    const optionsHash = optionsHashOf({ format, map: [...overrides], source: values.source ?? null });
    const loaded = await loadCheckpoint(cpPath, fingerprint.id, optionsHash);
    if (loaded.ignored) say.warn(`not resuming the earlier import: ${loaded.ignored}; starting over`);
    let state = loaded.checkpoint;
    if (state && state.failedPath !== failedPath) {
      say.warn(`not resuming the earlier import: it wrote its failed rows to ${state.failedPath}; starting over`);
      state = undefined;
    }
    if (state) say.info(`Resuming: ${state.doneChunks * CHUNK_ROWS} rows done by an earlier run are skipped.`);
    state ??= newCheckpoint(fingerprint.id, optionsHash, failedPath);
    try {
      await access(dirname(failedPath), constants.W_OK);
      await saveCheckpoint(cpPath, state);
    } catch (err) {
      // Both files are written as chunks finish: find out now, before anything is sent, that they cannot be.
      throw new UsageError(
        `cannot write ${(err as NodeJS.ErrnoException).path ?? dirname(failedPath)} (the checkpoint goes next to the input, failed rows to ${failedPath}): ${(err as Error).message}`,
      );
    }
    const failed = await FailedFile.open(failedPath, format, state.failedBytes);

    // Loaded here, not at the top: the other commands (help, login) start without the /v1 client.
    const { createClient } = await import('../../index.ts');
    const lw = createClient({ baseUrl, apiKey, fetch: ctx.fetch });
    // The server validates every field; the rows are passed on as read, so its messages are the ones users see.
    const send: SendChunk = async (rows, idempotencyKey) =>
      lw.contacts.batchUpsert(rows, { concurrency: 1, idempotencyKeyOf: () => idempotencyKey });
    let result;
    try {
      result = await runImport({
        ctx,
        items,
        overrides,
        source: values.source,
        estimate,
        send,
        failed,
        checkpoint: { path: cpPath, state },
      });
    } catch (err) {
      if (err instanceof CliError && err.exitCode !== ExitCode.usage) {
        throw new CliError(err.exitCode, `${err.message}\nProgress is saved: run the same command again to resume.`, { cause: err });
      }
      // A usage error (e.g. --map naming a missing column) comes before anything is sent: nothing to resume.
      await removeCheckpoint(cpPath);
      throw err;
    }
    const { totals, outcome } = result;
    const failedNote = state.failed > 0 ? ` (see ${failedPath})` : '';
    const skippedNote = totals.skipped > 0 ? `, ${totals.skipped} skipped (done by an earlier run)` : '';
    const summary = {
      created: totals.created,
      updated: totals.updated,
      failed: totals.failed,
      skipped: totals.skipped,
      failedFile: state.failed > 0 ? failedPath : null,
    };
    if (outcome === 'interrupted') {
      say.info(
        `Interrupted: ${totals.created} created, ${totals.updated} updated, ${totals.failed} failed so far. Run the same command again to resume.`,
      );
      ctx.stdout.write(`${JSON.stringify({ ...summary, interrupted: true })}\n`);
      return ExitCode.interrupted;
    }
    await removeCheckpoint(cpPath);
    say.info(
      `${outcome === 'stopped' ? 'Stopped' : 'Done'}: ${totals.created} created, ${totals.updated} updated, ${totals.failed} failed${failedNote}${skippedNote}.`,
    );
    ctx.stdout.write(`${JSON.stringify(summary)}\n`);
    return state.failed > 0 || outcome === 'stopped' ? ExitCode.partial : ExitCode.ok;
  },
};
