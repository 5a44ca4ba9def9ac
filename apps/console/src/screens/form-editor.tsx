import { useEffect, useState } from 'preact/hooks';
import { api, type Inputs, type Outputs } from '../api.ts';
import { ConsentEditor, consentDraft, consentPaths } from '../ui/consent-editor.tsx';
import { Checkbox, Form, FormProblem, Select, Submit, TextInput } from '../ui/form.tsx';
import { type DraftField, FieldEditor, Radios } from '../ui/forms.tsx';
import { useAction } from '../ui/use-load.ts';

type FormView = Outputs['forms']['get'];
type Pipeline = Outputs['pipelines']['list']['items'][number];
type Provider = NonNullable<Inputs['forms']['create']['captcha']>['provider'];
type ThankYouMode = 'default' | 'message' | 'redirect';

let nextKey = 0;
const draft = (f: Omit<DraftField, 'key' | 'idEdited' | 'options'> & { options?: string[] | undefined }): DraftField => ({
  ...f,
  key: ++nextKey,
  idEdited: true,
  options: (f.options ?? []).join('\n'),
});

const PROVIDERS: readonly { value: Provider; label: string }[] = [
  { value: 'turnstile', label: 'Cloudflare Turnstile' },
  { value: 'hcaptcha', label: 'hCaptcha' },
  { value: 'recaptcha', label: 'Google reCAPTCHA v3' },
];

/**
 * Creates a form or edits one: its name, fields (added, removed, reordered with buttons), whether it is published,
 * its pipeline, CAPTCHA and what a submitter sees afterwards. The server checks everything; its sentences show beside
 * the field they name.
 */
export function FormEditor(props: {
  form?: FormView;
  pipelines: readonly Pipeline[];
  onSaved: (form: FormView, created: boolean) => void;
  /** A save starts: an earlier "saved" no longer holds. */
  onSaving?: () => void;
}) {
  const { form } = props;
  const [name, setName] = useState(form?.name ?? '');
  const [fields, setFields] = useState<DraftField[]>(() =>
    form ? form.fields.map(draft) : [draft({ id: 'email', label: 'Email', type: 'email', required: true })],
  );
  const [published, setPublished] = useState(form?.published ?? true);
  const [pipelineId, setPipelineId] = useState(form?.pipelineId ?? '');
  const [captchaOn, setCaptchaOn] = useState(Boolean(form?.captcha));
  const [provider, setProvider] = useState<Provider>(form?.captcha?.provider ?? 'turnstile');
  const [siteKey, setSiteKey] = useState(form?.captcha?.siteKey ?? '');
  const [secret, setSecret] = useState('');
  const thanks = form?.thankYou;
  const [mode, setMode] = useState<ThankYouMode>(!thanks ? 'default' : 'redirectUrl' in thanks ? 'redirect' : 'message');
  const [message, setMessage] = useState(thanks && 'message' in thanks ? thanks.message : '');
  const [redirectUrl, setRedirectUrl] = useState(thanks && 'redirectUrl' in thanks ? thanks.redirectUrl : '');
  const [consent, setConsent] = useState(() => consentDraft(form?.consent));

  const save = useAction(async () => {
    props.onSaving?.();
    const input = {
      name,
      published,
      pipelineId: pipelineId || null,
      fields: fields.map((f) => ({
        id: f.id,
        label: f.label,
        type: f.type,
        required: f.required,
        ...(f.type === 'select'
          ? {
              options: f.options
                .split('\n')
                .map((o) => o.trim())
                .filter(Boolean),
            }
          : {}),
      })),
      captcha: captchaOn ? { provider, siteKey, ...(secret ? { secret } : {}) } : null,
      thankYou: mode === 'message' ? { message } : mode === 'redirect' ? { redirectUrl } : null,
      // No box: none asked of a new form; removed from one that had some (their recorded entries stay).
      ...(consent.purposes.length ? { consent } : form?.consent ? { consent: null } : {}),
    };
    const result = form ? await api.forms.update.mutate({ id: form.id, ...input }) : await api.forms.create.mutate(input);
    setSecret('');
    props.onSaved(result, !form);
  });
  const errors = save.problem?.fields ?? {};
  // The paths shown beside their inputs; a refusal naming only these says "correct the fields marked below".
  const shownFields = [
    ...[
      'name',
      'fields',
      'pipelineId',
      'thankYou.message',
      'thankYou.redirectUrl',
      'captcha.provider',
      'captcha.siteKey',
      'captcha.secret',
    ],
    ...fields.flatMap((_, i) => ['label', 'id', 'type', 'options'].map((k) => `fields.${i}.${k}`)),
    ...consentPaths(consent),
  ];

  // A moved field's button stays focused (the other one once it reaches an end); after a removal, "Add a field" is.
  const [focusNext, setFocusNext] = useState<string | null>(null);
  useEffect(() => {
    if (!focusNext) return;
    setFocusNext(null);
    const [wanted, other] = focusNext.split(' ').map((id) => document.getElementById(id) as HTMLButtonElement | null);
    (wanted && !wanted.disabled ? wanted : other)?.focus();
  }, [focusNext, fields]);
  const change = (i: number, next: DraftField) => setFields(fields.map((f, j) => (j === i ? next : f)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...fields];
    const [moved] = next.splice(i, 1);
    next.splice(i + by, 0, moved!);
    setFields(next);
    const [dir, back] = by < 0 ? ['up', 'down'] : ['down', 'up'];
    setFocusNext(`move-${dir}-${moved!.key} move-${back}-${moved!.key}`);
  };
  const add = () => setFields([...fields, { ...draft({ id: '', label: '', type: 'text', required: false }), idEdited: false }]);

  return (
    <Form onSubmit={save.run} label={form ? `Edit ${form.name}` : 'New form'} class="form-editor">
      <FormProblem problem={save.problem} fields={shownFields} />
      <TextInput
        label="Name"
        hint="For you and in the events; submitters see the fields."
        value={name}
        onValue={setName}
        error={errors.name}
        required
      />
      <h2>Fields</h2>
      {errors.fields && (
        <p class="field-error" role="alert">
          {errors.fields}
        </p>
      )}
      {fields.map((f, i) => (
        <FieldEditor
          key={f.key}
          field={f}
          index={i}
          count={fields.length}
          errors={errors}
          onChange={(next) => change(i, next)}
          onMove={(by) => move(i, by)}
          onRemove={() => {
            setFields(fields.filter((_, j) => j !== i));
            setFocusNext('add-field');
          }}
        />
      ))}
      <div>
        <button type="button" id="add-field" onClick={add}>
          Add a field
        </button>
      </div>
      <ConsentEditor value={consent} errors={errors} onValue={setConsent} />
      <h2>After a submission</h2>
      <Select
        label="Pipeline"
        hint="Where the contacts a submission makes are placed."
        value={pipelineId}
        error={errors.pipelineId}
        options={[{ value: '', label: 'Let the lead router choose' }, ...props.pipelines.map((p) => ({ value: p.id, label: p.name }))]}
        onValue={setPipelineId}
      />
      <Radios
        legend="What the submitter sees"
        name="thank-you"
        value={mode}
        options={[
          { value: 'default', label: 'The standard thank-you message' },
          { value: 'message', label: 'My own message' },
          { value: 'redirect', label: 'A page of my website (redirect)' },
        ]}
        onValue={setMode}
      />
      {mode === 'message' && (
        <TextInput label="Thank-you message" multiline value={message} onValue={setMessage} error={errors['thankYou.message']} />
      )}
      {mode === 'redirect' && (
        <TextInput
          label="Redirect address"
          type="url"
          hint="An https:// address, such as https://www.example.com/thanks."
          value={redirectUrl}
          onValue={setRedirectUrl}
          error={errors['thankYou.redirectUrl']}
        />
      )}
      <h2>Protection and publishing</h2>
      <Checkbox
        label="Require a CAPTCHA"
        hint="Submissions must carry a token the provider accepts."
        checked={captchaOn}
        onChecked={setCaptchaOn}
      />
      {captchaOn && (
        <>
          <Select label="CAPTCHA provider" value={provider} options={PROVIDERS} error={errors['captcha.provider']} onValue={setProvider} />
          <TextInput label="Site key" value={siteKey} onValue={setSiteKey} error={errors['captcha.siteKey']} />
          <TextInput
            label="Secret"
            type="password"
            autoComplete="off"
            hint={form?.captcha ? 'Stored and never shown again; leave empty to keep it.' : 'Stored to verify tokens; never shown again.'}
            value={secret}
            onValue={setSecret}
            error={errors['captcha.secret']}
          />
        </>
      )}
      <Checkbox
        label="Published"
        hint="The hosted page and the embedded form answer only while the form is published."
        checked={published}
        onChecked={setPublished}
      />
      <div>
        <Submit busy={save.busy} busyLabel="Saving…">
          {form ? 'Save form' : 'Create form'}
        </Submit>
      </div>
    </Form>
  );
}
