import type { Inputs, Outputs, Problem } from '../api.ts';
import { Copyable, Notice } from './common.tsx';
import { Select, TextInput } from './form.tsx';

export type StepAction = Inputs['workflows']['create']['steps'][number]['action'];
export type Workflow = Outputs['workflows']['get'];
export type Run = Outputs['workflows']['runs']['items'][number];
export type Pipeline = Outputs['pipelines']['list']['items'][number];

interface StepField {
  key: string;
  label: string;
  hint?: string;
  multiline?: boolean;
  /** Chosen among the organization's pipelines rather than typed. */
  pipeline?: boolean;
}

/*
 * The step kinds the workflow schema takes (packages/core/src/workflows/steps.ts), each with the inputs a person sets.
 * The input naming the contact is never asked for: the run's contact fills it in.
 */
export const STEP_KINDS: Record<StepAction, { label: string; fields: StepField[] }> = {
  add_tag: { label: 'Add tags', fields: [{ key: 'tags', label: 'Tags', hint: 'Comma-separated, e.g. webinar, vip.' }] },
  create_task: { label: 'Create a task', fields: [{ key: 'title', label: 'Task title', hint: "Attached to the run's contact." }] },
  create_deal: {
    label: 'Create a deal',
    fields: [{ key: 'pipelineId', label: 'Pipeline', hint: "Named after the contact, in the pipeline's first stage.", pipeline: true }],
  },
  update_contact: {
    label: 'Update the contact',
    fields: [
      { key: 'firstName', label: 'First name' },
      { key: 'lastName', label: 'Last name' },
      { key: 'phone', label: 'Phone' },
      { key: 'company', label: 'Company domain', hint: "One of your companies' domains, e.g. example.com." },
      { key: 'email', label: 'New email address' },
    ],
  },
  send_sms: {
    label: 'Send a text message',
    fields: [{ key: 'body', label: 'Message', hint: 'Sent only to contacts who consented to SMS.', multiline: true }],
  },
};

export const ACTIONS = Object.keys(STEP_KINDS) as StepAction[];

/** A step as the editor holds it: every input as the text typed; empty ones are left out when sent. */
export interface DraftStep {
  action: StepAction;
  values: Record<string, string>;
}

export const newStep = (action: StepAction = 'add_tag'): DraftStep => ({ action, values: {} });

export function stepsInput(steps: DraftStep[]): Inputs['workflows']['create']['steps'] {
  return steps.map((s) => ({
    action: s.action,
    input: Object.fromEntries(
      STEP_KINDS[s.action].fields.map((f) => [f.key, (s.values[f.key] ?? '').trim()] as const).filter(([, v]) => v !== ''),
    ),
  }));
}

/**
 * The steps of a new workflow, in order: each one's kind and inputs, moved or removed by buttons (the keyboard's way
 * to reorder). The server's message for an input shows beside it (`steps.N.input.<key>`).
 */
export function StepsEditor(props: {
  steps: DraftStep[];
  onSteps: (steps: DraftStep[]) => void;
  pipelines: Pipeline[];
  problem: Problem | null;
}) {
  const { steps, onSteps, pipelines } = props;
  const fields = props.problem?.fields ?? {};
  const set = (i: number, step: DraftStep) => onSteps(steps.map((s, j) => (j === i ? step : s)));
  const move = (i: number, by: number) => {
    const next = [...steps];
    const [step] = next.splice(i, 1);
    next.splice(i + by, 0, step!);
    onSteps(next);
  };
  return (
    <fieldset>
      <legend>Steps</legend>
      <p class="hint">Run in order when the intake URL receives a POST, each whatever happened to the ones before.</p>
      {fields.steps && <p class="field-error">{fields.steps}</p>}
      {steps.map((step, i) => {
        const n = i + 1;
        const kind = STEP_KINDS[step.action];
        return (
          <fieldset key={i} class="wf-step">
            <legend>
              Step {n}: {kind.label}
            </legend>
            <Select
              label={`Step ${n} action`}
              value={step.action}
              options={ACTIONS.map((a) => ({ value: a, label: STEP_KINDS[a].label }))}
              error={fields[`steps.${i}.action`]}
              onValue={(action) => set(i, { action, values: {} })}
            />
            {kind.fields.map((f) => {
              const error = fields[`steps.${i}.input.${f.key}`];
              const value = step.values[f.key] ?? '';
              const onValue = (v: string) => set(i, { ...step, values: { ...step.values, [f.key]: v } });
              return f.pipeline ? (
                <Select
                  key={f.key}
                  label={`${f.label} (step ${n})`}
                  hint={f.hint}
                  error={error}
                  value={value}
                  options={[{ value: '', label: 'Choose a pipeline' }, ...pipelines.map((p) => ({ value: p.id, label: p.name }))]}
                  onValue={onValue}
                />
              ) : (
                <TextInput
                  key={f.key}
                  label={`${f.label} (step ${n})`}
                  hint={f.hint}
                  error={error}
                  value={value}
                  multiline={f.multiline}
                  onValue={onValue}
                />
              );
            })}
            {fields[`steps.${i}.input`] && <p class="field-error">{fields[`steps.${i}.input`]}</p>}
            <div class="row-actions">
              <button type="button" disabled={i === 0} onClick={() => move(i, -1)}>
                Move step {n} up
              </button>
              <button type="button" disabled={i === steps.length - 1} onClick={() => move(i, 1)}>
                Move step {n} down
              </button>
              <button type="button" class="danger" onClick={() => onSteps(steps.filter((_, j) => j !== i))}>
                Remove step {n}
              </button>
            </div>
          </fieldset>
        );
      })}
      <button type="button" onClick={() => onSteps([...steps, newStep()])} disabled={steps.length >= 20}>
        Add a step
      </button>
    </fieldset>
  );
}

/** A stored step in words: its kind and what it sets. */
export function describeStep(step: { action: StepAction; input: Record<string, unknown> }, pipelines: Pipeline[] = []): string {
  const kind = STEP_KINDS[step.action];
  const parts = kind.fields
    .filter((f) => step.input[f.key] !== undefined)
    .map((f) => {
      const raw = step.input[f.key];
      const value = f.pipeline
        ? (pipelines.find((p) => p.id === raw)?.name ?? String(raw))
        : Array.isArray(raw)
          ? raw.join(', ')
          : String(raw);
      return `${f.label}: ${value}`;
    });
  return parts.length ? `${kind.label} (${parts.join('; ')})` : kind.label;
}

/** The intake URL in full, the one time the server gives it: copy it now, it is a credential. */
export function IntakeUrlOnce(props: { url: string; rotated?: boolean; onDone: () => void }) {
  return (
    <section class="card once" aria-labelledby="intake-once">
      <h2 id="intake-once">{props.rotated ? 'The new intake URL' : 'The intake URL of your workflow'}</h2>
      <Notice tone="warn">
        Copy it now: it is shown only this once. Whoever has it can start this workflow, which creates contacts and acts in your workspace's
        name, so keep it out of public places.{props.rotated ? ' The previous URL no longer works.' : ''}
      </Notice>
      <Copyable label="Intake URL" value={props.url} />
      <button type="button" onClick={props.onDone}>
        I have copied it
      </button>
    </section>
  );
}

export function RunStatus({ status }: { status: string }) {
  const words: Record<string, string> = {
    queued: 'Queued',
    running: 'Running',
    completed: 'Completed',
    completed_with_errors: 'Completed with errors',
  };
  return (
    <span class={`badge ${status === 'completed_with_errors' ? 'off' : status === 'completed' ? 'on' : ''}`}>
      {words[status] ?? status}
    </span>
  );
}

/** Each step of a run with what happened to it. */
export function RunSteps({ run }: { run: Run }) {
  return (
    <ol class="wf-outcomes">
      {run.steps.map((s, i) => (
        <li key={i}>
          {STEP_KINDS[s.action].label}:{' '}
          {!s.outcome ? (
            <span class="muted">not run yet</span>
          ) : s.outcome.status === 'ok' ? (
            <span class="wf-ok">done</span>
          ) : (
            <span class="wf-error">
              failed: {s.outcome.message} <span class="code">({s.outcome.code})</span>
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}
