import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { Problem } from '../api.ts';
import { href, moved } from '../router.ts';
import type { Load } from './use-load.ts';

/** A link inside the console: a real href (open in a new tab works); a plain click moves in the page (preact-iso). */
export function Link(props: { to: string; children: ComponentChildren; class?: string; current?: boolean; label?: string }) {
  return (
    <a href={href(props.to)} class={props.class} aria-current={props.current ? 'page' : undefined} aria-label={props.label}>
      {props.children}
    </a>
  );
}

/**
 * A screen's frame: its heading (focused when the user moved here, so keyboard and screen-reader users start at the top
 * of the new screen), an optional intro, and its actions.
 */
export function Page(props: { title: string; intro?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Leadwire`;
    if (moved) heading.current?.focus();
  }, [props.title]);
  return (
    <section class="page">
      <header class="page-header">
        <h1 tabIndex={-1} ref={heading}>
          {props.title}
        </h1>
        {props.actions && <div class="actions">{props.actions}</div>}
      </header>
      {props.intro && <p class="intro">{props.intro}</p>}
      {props.children}
    </section>
  );
}

/** What a screen shows while it loads, when loading failed (with a retry), and its data when ready. */
export function Loaded<T>(props: { load: Load<T>; what: string; children: (data: T) => ComponentChildren }) {
  const { load } = props;
  if (load.state === 'loading')
    return (
      <p class="loading" role="status">
        Loading {props.what}…
      </p>
    );
  if (load.state === 'failed') {
    return (
      <div class="problem" role="alert">
        <p>
          Could not load {props.what}: {load.problem.message} <span class="code">({load.problem.code})</span>
        </p>
        <button type="button" onClick={load.reload}>
          Try again
        </button>
      </div>
    );
  }
  return <>{props.children(load.data)}</>;
}

/** An empty list says what it would hold and what to do next. */
export function Empty(props: { title: string; children: ComponentChildren }) {
  return (
    <div class="empty">
      <h2>{props.title}</h2>
      <div>{props.children}</div>
    </div>
  );
}

/** A value to copy (a key, a snippet, a URL): shown in full, with a button that says when it has been copied. */
export function Copyable(props: { label: string; value: string; multiline?: boolean; copies?: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      // `copies`: what the button puts on the clipboard when it is not what is shown (a body shown pretty-printed).
      await navigator.clipboard.writeText(props.copies ?? props.value);
      setCopied('yes');
    } catch {
      // Clipboard access needs a secure context and the user's permission; the value stays selectable either way.
      setCopied('failed');
    }
  };
  return (
    <div class="copyable">
      {props.multiline ? (
        <pre tabIndex={0} aria-label={props.label}>
          <code>{props.value}</code>
        </pre>
      ) : (
        <code tabIndex={0} aria-label={props.label}>
          {props.value}
        </code>
      )}
      <button type="button" onClick={() => void copy()} aria-label={`${copied === 'yes' ? 'Copied' : 'Copy'} ${props.label}`}>
        {copied === 'yes' ? 'Copied' : 'Copy'}
      </button>
      <span role="status" class="visually-hidden">
        {copied === 'yes' ? `${props.label} copied` : copied === 'failed' ? 'Copying failed: select the text and copy it' : ''}
      </span>
    </div>
  );
}

/** A notice after something happened (saved, sent, revoked), announced politely. */
export function Notice(props: { children: ComponentChildren; tone?: 'ok' | 'warn' }) {
  return (
    <div class={`notice ${props.tone ?? 'ok'}`} role="status">
      {props.children}
    </div>
  );
}

/** A refusal that belongs to no form (a row's action), as a sentence. */
export function ProblemLine({ problem }: { problem: Problem | null }) {
  if (!problem) return null;
  return (
    <p class="problem" role="alert">
      {problem.message} <span class="code">({problem.code})</span>
    </p>
  );
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
/** For times that belong with the UTC charts beside them (the hourly cap's reset). */
const utcFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** A moment as people read it (in their zone, or in UTC beside UTC charts), with the exact ISO time in a machine-readable element. */
export function When({ at, never = 'never', utc = false }: { at: string | null | undefined; never?: string; utc?: boolean }) {
  if (!at) return <span class="muted">{never}</span>;
  return <time dateTime={at}>{utc ? `${utcFormat.format(new Date(at))} UTC` : dateFormat.format(new Date(at))}</time>;
}

/**
 * An action in two steps (revoke, delete, rotate): the first button opens a modal dialog that asks, readable at any
 * width (not squeezed into a table's last column); its confirm button has the focus, so Enter confirms and Escape or
 * Cancel steps back, the focus returning to the first button. `plain` for what can be lived with (a rotation with a
 * grace period), danger red otherwise.
 */
export function ConfirmAction(props: {
  label: string;
  /** The accessible name of the first button when the visible label alone is ambiguous in a table (`Revoke Zapier`). */
  name?: string;
  question: ComponentChildren;
  confirmLabel: string;
  busy: boolean;
  onConfirm: () => unknown;
  tone?: 'danger' | 'plain';
}) {
  const danger = props.tone !== 'plain';
  const [asking, setAsking] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (asking && !d.open) d.showModal();
    if (!asking && d.open) d.close();
  }, [asking]);
  return (
    <>
      <button type="button" class={danger ? 'danger' : undefined} ref={first} aria-label={props.name} onClick={() => setAsking(true)}>
        {props.label}
      </button>
      <dialog
        ref={dialog}
        class="confirm-action"
        aria-labelledby={titleId}
        onClose={() => {
          setAsking(false);
          first.current?.focus();
        }}
      >
        <h2 id={titleId}>{props.name ?? props.label}</h2>
        <p>{props.question}</p>
        <div class="row-actions">
          {asking && (
            <button
              type="button"
              class={danger ? 'danger' : 'primary'}
              // Focused when the dialog opens: the first control of a modal dialog takes it.
              autoFocus
              disabled={props.busy}
              onClick={() => {
                void Promise.resolve(props.onConfirm()).then(() => setAsking(false));
              }}
            >
              {props.busy ? 'Working…' : props.confirmLabel}
            </button>
          )}
          <button type="button" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

/** A yes/no state as a badge whose words say it (colour is never the only cue). */
export function StateBadge(props: { on: boolean; children: ComponentChildren }) {
  return <span class={`badge ${props.on ? 'on' : 'off'}`}>{props.children}</span>;
}
