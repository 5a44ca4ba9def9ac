/**
 * Reading the README and docs/ as the tests of the docs need them: the reading order, the shell examples split into
 * steps with the answers the docs show, the relative links and the paths the code maps name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/process.ts';

export const rel = (file: string) => path.relative(ROOT, file);

/** README.md, then the docs/ files in the order the README's "Where to go next" links them. */
export function readingOrder(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const next = readme.split('\n## Where to go next\n')[1]?.split('\n## ')[0] ?? '';
  const linked = [...next.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]!);
  return ['README.md', ...new Set(linked)];
}

export const docsFiles = () =>
  readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);

export interface Step {
  /** Where the step's first line is, `file:line`, for failure messages. */
  at: string;
  code: string;
  /** The comment lines right after the code: the answer the docs show. */
  shown: string[];
}

const SKIP = /^<!-- example: not run: .+ -->$/;

/**
 * The ```sh blocks of a file, each cut into steps: code lines up to the comment lines that show their answer, or up to
 * a command sent to the background. A block preceded by `<!-- example: not run: <why> -->` is left out.
 */
export function shellSteps(file: string): Step[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const previous =
      lines
        .slice(0, i)
        .reverse()
        .find((l) => l.trim() !== '') ?? '';
    const end = lines.indexOf('```', i + 1);
    if (SKIP.test(previous)) {
      i = end;
      continue;
    }
    let code: string[] = [];
    let shown: string[] = [];
    let first = 0;
    const flush = () => {
      if (code.some((l) => l.trim() !== '')) steps.push({ at: `${file}:${first + 1}`, code: code.join('\n'), shown });
      code = [];
      shown = [];
    };
    for (let j = i + 1; j < end; j++) {
      const line = lines[j]!;
      const comment = /^#( |$)/.test(line);
      if (comment && code.some((l) => l.trim() !== '')) shown.push(line.replace(/^# ?/, ''));
      else if (!comment) {
        if (shown.length) flush();
        if (!code.some((l) => l.trim() !== '')) first = j;
        code.push(line);
        // A command sent to the background ends its step: what follows may have to wait for it.
        if (/&\s*(\w+=\$!)?\s*$/.test(line)) flush();
      }
    }
    flush();
    i = end;
  }
  return steps;
}

/** What the docs show: a status (`201 {…}`; 200 when a JSON answer is shown bare), the JSON text and plain lines. */
export function expectation(shown: string[]): { status: number | null; json: string | null; lines: string[] } {
  const text = shown.join('\n').trim();
  const status = /^(\d{3})\b/.exec(text);
  const rest = status ? text.slice(3).trim() : text;
  const json = /^[[{]/.test(rest) ? rest : null;
  return {
    status: status ? Number(status[1]) : json ? 200 : null,
    json,
    lines: json || status ? [] : shown.filter((l) => l.trim() !== ''),
  };
}

/** `"key":value` pairs of a shown answer whose value is given in full (no `…`): the answer must contain each as is. */
export const literals = (json: string): string[] =>
  [...json.matchAll(/"[\w$]+":(?:true|false|null|-?\d+(?:\.\d+)?|"[^"…]*")(?=[,}\]])/g)].map((m) => m[0]);

/** A shown plain line as a pattern: `…` stands for anything. */
export const linePattern = (line: string) =>
  new RegExp(
    line
      .split('…')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  );

/** Relative links `[text](target)` outside code, with their line. */
export function relativeLinks(file: string): { target: string; line: number }[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ' '));
  const out: { target: string; line: number }[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(m[1]!)) continue;
    out.push({ target: m[1]!, line: text.slice(0, m.index).split('\n').length });
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

export function anchors(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}
