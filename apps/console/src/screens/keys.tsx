import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Outputs, problemOf } from '../api.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { ConfirmAction, Copyable, Empty, Loaded, Notice, Page, ProblemLine, StateBadge, When } from '../ui/common.tsx';
import { Checkbox, Form, FormProblem, Select, Submit, TextInput } from '../ui/form.tsx';
import { useAction, useLoad, useRowAction } from '../ui/use-load.ts';
import { Table } from '../ui/table.tsx';

type Key = Outputs['apiKeys']['list']['keys'][number];
type Created = Outputs['apiKeys']['create'];
type KeyType = Key['type'];

/** The Public permissions a key may carry, in the words of docs/partners.md (the apiKeys.create input's enum). */
const PERMISSIONS = [
  { value: 'contacts:read', label: 'Read contacts', hint: 'search, list and read contacts' },
  { value: 'contacts:write', label: 'Write contacts', hint: 'create and update contacts' },
  { value: 'companies:read', label: 'Read companies', hint: '' },
  { value: 'companies:write', label: 'Write companies', hint: '' },
  { value: 'leads:write', label: 'Send leads', hint: 'POST /v1/leads, as website forms and partners do' },
  { value: 'notes:write', label: 'Add notes', hint: 'to contacts' },
  { value: 'events:read', label: 'Read the changes feed', hint: 'GET /v1/events' },
] as const;
type Permission = (typeof PERMISSIONS)[number]['value'];

const TYPES: { value: KeyType; label: string }[] = [
  { value: 'public', label: 'Public: the /v1 API, with the permissions you tick' },
  { value: 'internal', label: 'Internal: the application API, acting as you' },
];

const STATUS: Record<Key['status'], string> = {
  active: 'Active',
  revoked: 'Revoked',
  expired: 'Expired',
  stopped: 'Stopped (its creator was deactivated or logged out everywhere)',
};

/** API keys: the list, creation behind the password confirmation, the value shown once, revocation. */
export function Keys({ me }: ScreenProps) {
  const load = useLoad(() => api.apiKeys.list.query());
  const [created, setCreated] = useState<Created | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  return (
    <Page
      title="API keys"
      intro={
        isManager(me)
          ? 'Every key of your workspace. A Public key lets a website or partner call the /v1 API with the permissions you tick; an Internal key lets your own tools act as you.'
          : 'The keys you created. A Public key lets a website or partner call the /v1 API with the permissions you tick; an Internal key lets your own tools act as you.'
      }
    >
      {created && <CreatedKey created={created} onDone={() => setCreated(null)} />}
      {revoked && <Notice>The key “{revoked}” is revoked: requests with it are refused from now on.</Notice>}
      <Loaded load={load} what="API keys">
        {(data) =>
          data.keys.length === 0 ? (
            <Empty title="No API keys yet">
              <p>Create one below: a Public key with “Send leads” is what a website form or a partner needs.</p>
            </Empty>
          ) : (
            <KeyTable
              keys={data.keys}
              me={me}
              onRevoked={(key) => {
                setCreated(null);
                setRevoked(key.name);
                load.reload();
              }}
            />
          )
        }
      </Loaded>
      <CreateKey
        onCreated={(key) => {
          setRevoked(null);
          setCreated(key);
          load.reload();
        }}
      />
    </Page>
  );
}

/** The value, this once: only its hash is stored. Focus moves here so the warning is read first. */
function CreatedKey({ created, onDone }: { created: Created; onDone: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), [created.id]);
  return (
    <div class="card key-created" tabIndex={-1} ref={box} aria-labelledby="key-created-title">
      <h2 id="key-created-title">Your new key “{created.name}”</h2>
      <Notice tone="warn">Copy it now and keep it somewhere safe: it will not be shown again, by this screen or anyone.</Notice>
      <Copyable label="API key value" value={created.value} />
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

function KeyTable(props: { keys: Key[]; me: ScreenProps['me']; onRevoked: (key: Key) => void }) {
  const row = useRowAction();
  const revoke = async (key: Key) => {
    if (await row.run(key.id, () => api.apiKeys.revoke.mutate({ id: key.id }))) props.onRevoked(key);
  };
  // Owners and admins revoke any key of the workspace; members only their own (the server answers not_found otherwise).
  const mayRevoke = (key: Key) => key.status !== 'revoked' && (isManager(props.me) || key.createdBy.id === props.me.userId);
  return (
    <Table
      caption="API keys"
      rows={props.keys}
      rowKey={(key) => key.id}
      columns={[
        {
          header: 'Name',
          cell: (key) => (
            <>
              {key.name}
              <br />
              <code class="muted">{key.displayPrefix}…</code>
            </>
          ),
        },
        { header: 'Type', cell: (key) => (key.type === 'public' ? 'Public' : 'Internal') },
        {
          header: 'Permissions',
          cell: (key) => (key.type === 'internal' ? <span class="muted">acts as its creator</span> : key.permissions.join(', ')),
        },
        {
          header: 'Status',
          cell: (key) => (
            <>
              <StateBadge on={key.status === 'active'}>{STATUS[key.status]}</StateBadge>
              {key.expiresAt && key.status === 'active' && (
                <div class="muted">
                  expires <When at={key.expiresAt} />
                </div>
              )}
            </>
          ),
        },
        { header: 'Created', cell: (key) => <When at={key.createdAt} /> },
        { header: 'Last used', cell: (key) => <When at={key.lastUsedAt} /> },
        { header: 'Created by', cell: (key) => key.createdBy.email },
        {
          header: 'Actions',
          hidden: true,
          cell: (key) => (
            <>
              {mayRevoke(key) && (
                <ConfirmAction
                  label="Revoke"
                  name={`Revoke ${key.name}`}
                  question={`Revoke “${key.name}”? Everything using it is refused from its next request, and this cannot be undone.`}
                  confirmLabel="Yes, revoke it"
                  busy={row.busy === key.id}
                  onConfirm={() => revoke(key)}
                />
              )}
              <ProblemLine problem={row.problemOf(key.id)} />
            </>
          ),
        },
      ]}
    />
  );
}

/**
 * Creation asks for the password when this session has not confirmed it in the last 5 minutes (the server's rule,
 * accounts.confirmPassword); after a confirmation the field goes away until the server asks again.
 */
function CreateKey({ onCreated }: { onCreated: (key: Created) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<KeyType>('public');
  const [permissions, setPermissions] = useState<Permission[]>([]);
  const [expires, setExpires] = useState('');
  const [password, setPassword] = useState('');
  const [unlocked, setUnlocked] = useState(false);
  const submit = useAction(async () => {
    if (!unlocked) {
      await api.accounts.confirmPassword.mutate({ password });
      setPassword('');
      setUnlocked(true);
    }
    try {
      const key = await api.apiKeys.create.mutate({
        name,
        type,
        ...(type === 'public' ? { permissions } : {}),
        // A number the server checks (whole days, 1 to 3650); text it cannot read goes as is, to be refused by name.
        ...(expires.trim() ? { expiresInDays: Number(expires) } : {}),
      });
      setName('');
      setPermissions([]);
      setExpires('');
      onCreated(key);
    } catch (err) {
      // The 5 minutes ran out (or the session changed): ask for the password again.
      if (problemOf(err).code === 'confirmation_required') setUnlocked(false);
      throw err;
    }
  });
  // A wrong password is about the password field: shown there, like a field the server named.
  const problem =
    submit.problem?.code === 'wrong_password' ? { ...submit.problem, fields: { password: submit.problem.message } } : submit.problem;
  const fields = problem?.fields ?? {};
  const toggle = (p: Permission, on: boolean) => setPermissions((all) => (on ? [...all, p] : all.filter((x) => x !== p)));
  return (
    <section class="card" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <Form onSubmit={submit.run} label="Create a key">
        <FormProblem problem={problem} fields={['name', 'type', 'permissions', 'expiresInDays', 'password']} />
        <TextInput
          label="Name"
          hint="Where it will be used, e.g. “Website form” or “Zapier”."
          value={name}
          onValue={setName}
          error={fields.name}
          required
        />
        <Select label="Type" value={type} options={TYPES} onValue={setType} error={fields.type} />
        {type === 'public' && (
          <fieldset aria-describedby={fields.permissions ? 'key-permissions-error' : undefined}>
            <legend>Permissions</legend>
            {PERMISSIONS.map((p) => (
              <Checkbox
                key={p.value}
                label={
                  <>
                    {p.label} <code>{p.value}</code>
                  </>
                }
                hint={p.hint || undefined}
                checked={permissions.includes(p.value)}
                onChecked={(on) => toggle(p.value, on)}
              />
            ))}
            {fields.permissions && (
              <p class="field-error" id="key-permissions-error">
                {fields.permissions}
              </p>
            )}
          </fieldset>
        )}
        <TextInput
          label="Expires after (days, optional)"
          hint="Leave empty for a key that works until it is revoked."
          type="number"
          value={expires}
          onValue={setExpires}
          error={fields.expiresInDays}
        />
        {!unlocked && (
          <TextInput
            label="Your password"
            hint="Creating a key needs your password again, as a security check. It then stays unlocked for 5 minutes."
            type="password"
            autoComplete="current-password"
            value={password}
            onValue={setPassword}
            error={fields.password}
            required
          />
        )}
        <Submit busy={submit.busy} busyLabel="Creating…">
          Create key
        </Submit>
      </Form>
    </section>
  );
}
