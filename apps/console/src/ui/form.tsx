import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import type { Problem } from '../api.ts';

/**
 * A labelled input with its hint and its error beside it, tied together for screen readers (`aria-describedby`,
 * `aria-invalid`). `error` is the server's sentence for this field, when it named it.
 */
export function Field(props: {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errorId = props.error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint && (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {props.children({ id, describedBy, invalid: Boolean(props.error) })}
      {props.error && (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </div>
  );
}

interface InputProps {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search';
  name?: string;
  autoComplete?: string;
  placeholder?: string;
  required?: boolean;
  multiline?: boolean;
}

/** A text input (or, `multiline`, a text area) with its label, hint and error. */
export function TextInput({ label, hint, error, value, onValue, multiline, ...rest }: InputProps) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => {
        const common = {
          id,
          value,
          name: rest.name,
          required: rest.required,
          placeholder: rest.placeholder,
          'aria-describedby': describedBy,
          'aria-invalid': invalid || undefined,
        };
        // Preact types each input type's attributes apart; this is one input whose type the caller picks.
        const type = (rest.type ?? 'text') as 'text';
        return multiline ? (
          <textarea {...common} onInput={(e) => onValue(e.currentTarget.value)} />
        ) : (
          <input {...common} type={type} autoComplete={rest.autoComplete} onInput={(e) => onValue(e.currentTarget.value)} />
        );
      }}
    </Field>
  );
}

export function Select<T extends string>(props: {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  value: T;
  options: readonly { value: T; label: string }[];
  onValue: (value: T) => void;
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {({ id, describedBy, invalid }) => (
        <select
          id={id}
          value={props.value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onChange={(e) => props.onValue(e.currentTarget.value as T)}
        >
          {props.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function Checkbox(props: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  checked: boolean;
  onChecked: (checked: boolean) => void;
  name?: string;
}) {
  const id = useId();
  return (
    <div class="check">
      <input type="checkbox" id={id} name={props.name} checked={props.checked} onChange={(e) => props.onChecked(e.currentTarget.checked)} />
      <label for={id}>
        {props.label}
        {props.hint && <span class="hint"> {props.hint}</span>}
      </label>
    </div>
  );
}

/**
 * The refusal of a whole form, as a sentence, announced to screen readers when it appears. Field-level messages show
 * beside their fields; this says what no single field explains.
 */
export function FormProblem({ problem, fields = [] }: { problem: Problem | null; fields?: readonly string[] }) {
  if (!problem) return null;
  const shownBeside = Object.keys(problem.fields).length > 0 && Object.keys(problem.fields).every((f) => fields.includes(f));
  return (
    <div class="problem" role="alert">
      {shownBeside ? 'Please correct the fields marked below.' : problem.message}
      <span class="code"> ({problem.code})</span>
    </div>
  );
}

/** A submit button that says what it is doing and cannot be pressed twice. */
export function Submit(props: { busy: boolean; children: ComponentChildren; busyLabel?: string; class?: string }) {
  return (
    <button type="submit" class={props.class ?? 'primary'} disabled={props.busy} aria-busy={props.busy || undefined}>
      {props.busy ? (props.busyLabel ?? 'Working…') : props.children}
    </button>
  );
}

/**
 * A form whose submission never reloads the page. Given the refusal of its last submission (`problem`), it moves the
 * focus to the first control the refusal names (marked `aria-invalid`, its message beside it), so a keyboard or
 * screen-reader user lands on what to fix instead of at the bottom of a long form.
 */
export function Form(props: {
  onSubmit: () => unknown;
  children: ComponentChildren;
  label?: string;
  class?: string;
  problem?: Problem | null;
}) {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (!props.problem || Object.keys(props.problem.fields).length === 0) return;
    const invalid = form.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    // A group (the event picker) takes the focus on its first control; its message is what it is described by.
    const target = invalid?.matches('input, select, textarea, button')
      ? invalid
      : invalid?.querySelector<HTMLElement>('input, select, textarea, button');
    target?.focus();
  }, [props.problem]);
  return (
    <form
      ref={form}
      class={props.class}
      aria-label={props.label}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit();
      }}
    >
      {props.children}
    </form>
  );
}
