import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A destructive action in two steps: the first button asks, the second (focused, so Enter confirms and Escape or
 * Cancel steps back) does it. Cancel returns focus to the first button so keyboard users stay where they were.
 */
export function ConfirmAction(props: {
  label: string;
  /** The accessible name of the first button when the visible label alone is ambiguous in a table (`Revoke Zapier`). */
  name?: string;
  question: ComponentChildren;
  confirmLabel: string;
  busy: boolean;
  onConfirm: () => unknown;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirm.current?.focus();
    else if (wasAsking.current) first.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" class="danger" ref={first} aria-label={props.name} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <div
      class="confirm-action"
      role="group"
      aria-label={props.name ?? props.label}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setAsking(false);
      }}
    >
      <p>{props.question}</p>
      <button
        type="button"
        class="danger"
        ref={confirm}
        disabled={props.busy}
        onClick={() => {
          void Promise.resolve(props.onConfirm()).then(() => setAsking(false));
        }}
      >
        {props.busy ? 'Working…' : props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}

/** A yes/no state as a badge whose words say it (colour is never the only cue). */
export function StateBadge(props: { on: boolean; children: ComponentChildren }) {
  return <span class={`badge ${props.on ? 'on' : 'off'}`}>{props.children}</span>;
}
