import type { Inputs, Outputs } from '../api.ts';
import { When } from './common.tsx';
import { Checkbox, Select, TextInput } from './form.tsx';
import { Table } from './table.tsx';

export type FieldType = Inputs['forms']['create']['fields'][number]['type'];
type Submission = Outputs['forms']['submissions']['items'][number];

/** A field as the editor holds it: options as typed (one a line), and a key that survives reordering. */
export interface DraftField {
  key: number;
  id: string;
  /** The id follows the label until the person edits it. */
  idEdited: boolean;
  label: string;
  type: FieldType;
  required: boolean;
  options: string;
}

export const FIELD_TYPES: readonly { value: FieldType; label: string }[] = [
  { value: 'text', label: 'Text' },
  { value: 'email', label: 'Email' },
  { value: 'tel', label: 'Phone' },
  { value: 'url', label: 'Web address' },
  { value: 'number', label: 'Number' },
  { value: 'textarea', label: 'Long text' },
  { value: 'select', label: 'Choice (select)' },
  { value: 'checkbox', label: 'Checkbox' },
];

/**
 * A field id from its label, in the shape the server takes (a letter, then letters, digits, _ or -): camelCase, so
 * "First name" becomes `firstName`, an id intake also reads onto the contact.
 */
export function idFromLabel(label: string): string {
  const words = label
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9 ]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  const id = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase())).join('');
  return /^[A-Za-z]/.test(id) ? id.slice(0, 64) : id ? `f${id}`.slice(0, 64) : '';
}

/** One field of the form: its label, id, type, whether it is required, and buttons to move or remove it. */
export function FieldEditor(props: {
  field: DraftField;
  index: number;
  count: number;
  errors: Record<string, string>;
  onChange: (next: DraftField) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const { field: f, index: i, errors } = props;
  const err = (name: string) => errors[`fields.${i}.${name}`];
  const name = f.label || `field ${i + 1}`;
  return (
    <fieldset class="form-field">
      <legend>
        Field {i + 1}
        {f.label ? `: ${f.label}` : ''}
      </legend>
      <TextInput
        label="Label"
        value={f.label}
        error={err('label')}
        onValue={(label) => props.onChange({ ...f, label, id: f.idEdited ? f.id : idFromLabel(label) })}
      />
      <TextInput
        label="Field id"
        hint="The key submissions use; firstName, lastName, email and phone also fill the contact."
        value={f.id}
        error={err('id')}
        onValue={(id) => props.onChange({ ...f, id, idEdited: true })}
      />
      <Select label="Type" value={f.type} options={FIELD_TYPES} error={err('type')} onValue={(type) => props.onChange({ ...f, type })} />
      {f.type === 'select' && (
        <TextInput
          label="Choices"
          hint="One a line."
          multiline
          value={f.options}
          error={err('options') ?? Object.entries(errors).find(([k]) => k.startsWith(`fields.${i}.options.`))?.[1]}
          onValue={(options) => props.onChange({ ...f, options })}
        />
      )}
      <Checkbox label="Required" checked={f.required} onChecked={(required) => props.onChange({ ...f, required })} />
      <div class="row-actions">
        <button type="button" id={`move-up-${f.key}`} onClick={() => props.onMove(-1)} disabled={i === 0} aria-label={`Move up: ${name}`}>
          Move up
        </button>
        <button
          type="button"
          id={`move-down-${f.key}`}
          onClick={() => props.onMove(1)}
          disabled={i === props.count - 1}
          aria-label={`Move down: ${name}`}
        >
          Move down
        </button>
        <button type="button" class="danger" onClick={props.onRemove} aria-label={`Remove: ${name}`}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}

const answerText = (v: string | number | boolean) => (typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v));

/** Recent submissions: when, who (the contact made or matched), what they answered, and where they came from. */
export function SubmissionsTable(props: { items: readonly Submission[]; labels: Record<string, string> }) {
  return (
    <Table
      caption="Recent submissions, newest first"
      rows={[...props.items]}
      rowKey={(s) => s.id}
      rowHeader={false}
      columns={[
        { header: 'Received', cell: (s) => <When at={s.createdAt} /> },
        { header: 'Contact', cell: (s) => (s.contact ? (s.contact.email ?? 'a contact without email') : <span class="muted">none</span>) },
        {
          header: 'Answers',
          cell: (s) => (
            <dl class="pairs">
              {Object.entries(s.answers).map(([id, v]) => (
                <div key={id}>
                  <dt>{props.labels[id] ?? id}</dt>
                  <dd>{answerText(v)}</dd>
                </div>
              ))}
            </dl>
          ),
        },
        {
          header: 'Attribution',
          cell: (s) => (
            <dl class="pairs">
              {Object.entries(s.attribution.utm).map(([k, v]) => (
                <div key={k}>
                  <dt>utm_{k}</dt>
                  <dd>{v}</dd>
                </div>
              ))}
              <div>
                <dt>Source</dt>
                <dd>{s.attribution.referrer ?? <span class="muted">direct</span>}</dd>
              </div>
              <div>
                <dt>Landing page</dt>
                <dd>{s.attribution.landingPage ?? <span class="muted">unknown</span>}</dd>
              </div>
            </dl>
          ),
        },
      ]}
    />
  );
}

/** A choice of a few options as radio buttons in a labelled group. */
export function Radios<T extends string>(props: {
  legend: string;
  name: string;
  value: T;
  options: readonly { value: T; label: string }[];
  onValue: (value: T) => void;
}) {
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.options.map((o) => (
        <div class="check" key={o.value}>
          <input
            type="radio"
            id={`${props.name}-${o.value}`}
            name={props.name}
            value={o.value}
            checked={props.value === o.value}
            onChange={() => props.onValue(o.value)}
          />
          <label for={`${props.name}-${o.value}`}>{o.label}</label>
        </div>
      ))}
    </fieldset>
  );
}
