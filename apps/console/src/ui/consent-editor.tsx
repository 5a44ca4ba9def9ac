import type { Outputs } from '../api.ts';
import { Checkbox, TextInput } from './form.tsx';

type Purpose = { purpose: string; text: string; version: string; required: boolean };
export interface ConsentDraft {
  doubleOptIn: boolean;
  purposes: Purpose[];
}

/** The form's consent as the editor holds it: no checkbox at all when the form has none. */
export const consentDraft = (c: Outputs['forms']['get']['consent'] | undefined): ConsentDraft => ({
  doubleOptIn: c?.doubleOptIn ?? false,
  purposes: (c?.purposes ?? []).map(({ purpose, text, version, required }) => ({ purpose, text, version, required })),
});

/** The paths of the server's refusals shown beside their inputs. */
export const consentPaths = (d: ConsentDraft) =>
  d.purposes.flatMap((_, i) => ['purpose', 'text', 'version'].map((k) => `consent.purposes.${i}.${k}`));

/**
 * A form's consent checkboxes (issue 30): per purpose its exact text and version, recorded with every answer; and
 * whether a ticked box waits for the confirmation link (double opt-in). Removing every box removes them from the form.
 */
export function ConsentEditor({
  value: d,
  errors,
  onValue,
}: {
  value: ConsentDraft;
  errors: Record<string, string>;
  onValue: (d: ConsentDraft) => void;
}) {
  const change = (i: number, p: Partial<Purpose>) => onValue({ ...d, purposes: d.purposes.map((q, j) => (j === i ? { ...q, ...p } : q)) });
  return (
    <>
      <h2>Consent</h2>
      {d.purposes.map((p, i) => {
        const err = (k: string) => errors[`consent.purposes.${i}.${k}`];
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a box has no identity but its place; removing one re-keys the rest.
          <fieldset class="form-field" key={i}>
            <legend>Consent checkbox {i + 1}</legend>
            <TextInput
              label="Purpose"
              hint="email_marketing, sms or your own."
              value={p.purpose}
              error={err('purpose')}
              onValue={(purpose) => change(i, { purpose })}
            />
            <TextInput label="Text shown" multiline value={p.text} error={err('text')} onValue={(text) => change(i, { text })} />
            <TextInput label="Version" value={p.version} error={err('version')} onValue={(version) => change(i, { version })} />
            <Checkbox label="Required" checked={p.required} onChecked={(required) => change(i, { required })} />
            <div class="row-actions">
              <button
                type="button"
                class="danger"
                aria-label={`Remove consent checkbox ${i + 1}`}
                onClick={() => onValue({ ...d, purposes: d.purposes.filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
      <div>
        <button
          type="button"
          onClick={() => onValue({ ...d, purposes: [...d.purposes, { purpose: '', text: '', version: '1', required: false }] })}
        >
          Add a consent checkbox
        </button>
      </div>
      {d.purposes.length > 0 && (
        <Checkbox
          label="Double opt-in"
          hint="A ticked box waits for the link mailed to the person."
          checked={d.doubleOptIn}
          onChecked={(doubleOptIn) => onValue({ ...d, doubleOptIn })}
        />
      )}
    </>
  );
}
