import { useId, useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { ConfirmAction, Loaded, Notice, Page, ProblemLine, StateBadge, When } from '../ui/common.tsx';
import { Form, FormProblem, Select, Submit, TextInput } from '../ui/form.tsx';
import { useAction, useLoad, useRowAction } from '../ui/use-load.ts';
import { Table } from '../ui/table.tsx';

type Member = Outputs['accounts']['members']['members'][number];
type Role = Member['role'];
type Invited = Outputs['accounts']['invite'];

const ROLES: { value: Role; label: string }[] = [
  { value: 'owner', label: 'Owner' },
  { value: 'admin', label: 'Admin' },
  { value: 'member', label: 'Member' },
];
const INVITE_ROLES = ROLES.filter((r) => r.value !== 'owner') as { value: Invited['role']; label: string }[];
const roleName = (role: Role) => ROLES.find((r) => r.value === role)!.label;

/**
 * Members: who is in the workspace. Owners and admins invite, deactivate and reactivate (an admin never acts on an
 * owner); only owners change roles (packages/core/src/accounts/users.ts, invites.ts).
 */
export function Members({ me }: ScreenProps) {
  const load = useLoad(() => api.accounts.members.query());
  const [done, setDone] = useState<string | null>(null);
  return (
    <Page
      title="Members"
      intro={
        me.role === 'owner'
          ? 'Everyone in your workspace. Invite people, change their role, or deactivate someone: their sessions and API keys stop at once.'
          : me.role === 'admin'
            ? 'Everyone in your workspace. Invite people, deactivate or reactivate admins and members; only an owner changes roles.'
            : 'Everyone in your workspace. Owners and admins invite people and manage access.'
      }
    >
      {done && <Notice>{done}</Notice>}
      <Loaded load={load} what="members">
        {(data) => (
          <MemberTable
            members={data.members}
            me={me}
            // The last change's sentence goes when the next begins, so it never sits beside a newer refusal.
            onStart={() => setDone(null)}
            onChanged={(sentence) => {
              setDone(sentence);
              load.reload();
            }}
          />
        )}
      </Loaded>
      {isManager(me) && <Invitations onInvited={() => setDone(null)} />}
    </Page>
  );
}

function MemberTable(props: { members: Member[]; me: ScreenProps['me']; onStart: () => void; onChanged: (sentence: string) => void }) {
  const { me } = props;
  const row = useRowAction();
  const act = async (m: Member, run: () => Promise<unknown>, sentence: string) => {
    props.onStart();
    if (await row.run(m.id, run)) props.onChanged(sentence);
  };
  // What the server would let this person do to that row; nothing else is offered.
  const mayToggle = (m: Member) => isManager(me) && m.id !== me.userId && (m.role !== 'owner' || me.role === 'owner');
  return (
    <Table
      caption="Members"
      rows={props.members}
      rowKey={(m) => m.id}
      columns={[
        {
          header: 'Email',
          cell: (m) => (
            <>
              {m.email}
              {m.id === me.userId && <span class="muted"> (you)</span>}
            </>
          ),
        },
        { header: 'Name', cell: (m) => m.name ?? <span class="muted">none given</span> },
        {
          header: 'Role',
          cell: (m) =>
            me.role === 'owner' ? (
              <RoleChanger
                member={m}
                busy={row.busy === m.id}
                onChange={(role) =>
                  act(m, () => api.accounts.changeRole.mutate({ userId: m.id, role }), `${m.email} is now ${roleName(role).toLowerCase()}.`)
                }
              />
            ) : (
              roleName(m.role)
            ),
        },
        { header: 'Access', cell: (m) => <StateBadge on={m.active}>{m.active ? 'Active' : 'Deactivated'}</StateBadge> },
        { header: 'Joined', cell: (m) => <When at={m.createdAt} /> },
        {
          header: 'Actions',
          hidden: true,
          cell: (m) => (
            <>
              {mayToggle(m) &&
                (m.active ? (
                  <ConfirmAction
                    label="Deactivate"
                    name={`Deactivate ${m.email}`}
                    question={`Deactivate ${m.email}? Their sessions and every API key they created stop at once; reactivating does not bring those back.`}
                    confirmLabel="Yes, deactivate"
                    busy={row.busy === m.id}
                    onConfirm={() => act(m, () => api.accounts.deactivate.mutate({ userId: m.id }), `${m.email} is deactivated.`)}
                  />
                ) : (
                  <button
                    type="button"
                    aria-label={`Reactivate ${m.email}`}
                    disabled={row.busy === m.id}
                    onClick={() =>
                      void act(
                        m,
                        () => api.accounts.reactivate.mutate({ userId: m.id }),
                        `${m.email} is active again and can sign in; their old sessions and keys stay ended.`,
                      )
                    }
                  >
                    Reactivate
                  </button>
                ))}
              <ProblemLine problem={row.problemOf(m.id)} />
            </>
          ),
        },
      ]}
    />
  );
}

/** A role picker with its own button: changing the selection alone does nothing, so arrow keys never fire a change. */
function RoleChanger(props: { member: Member; busy: boolean; onChange: (role: Role) => unknown }) {
  const [role, setRole] = useState<Role>(props.member.role);
  const id = useId();
  return (
    <div class="role-changer">
      <label class="visually-hidden" for={id}>
        Role of {props.member.email}
      </label>
      <select id={id} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
        {ROLES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>
      {role !== props.member.role && (
        <button
          type="button"
          aria-label={`Change role of ${props.member.email}`}
          disabled={props.busy}
          onClick={() => void props.onChange(role)}
        >
          Change role
        </button>
      )}
    </div>
  );
}

/** The invitations still pending (they can be accepted until they expire) and the form that sends one. */
function Invitations(props: { onInvited: () => void }) {
  const pending = useLoad(() => api.accounts.invites.query());
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Invited['role']>('member');
  const [sent, setSent] = useState<Invited | null>(null);
  const submit = useAction(async () => {
    setSent(null);
    const inv = await api.accounts.invite.mutate({ email, role });
    setEmail('');
    setSent(inv);
    props.onInvited();
    pending.reload();
  });
  const fields = submit.problem?.fields ?? {};
  return (
    <section class="card" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <Form onSubmit={submit.run} label="Invite someone">
        <FormProblem problem={submit.problem} fields={['email', 'role']} />
        <TextInput
          label="Email"
          type="email"
          hint="They get a link to choose a password and join; it works for 7 days. Inviting the same address again sends a new link."
          value={email}
          onValue={setEmail}
          error={fields.email}
          required
        />
        <Select label="Role" value={role} options={INVITE_ROLES} onValue={setRole} error={fields.role} />
        <Submit busy={submit.busy} busyLabel="Inviting…">
          Send invitation
        </Submit>
      </Form>
      {sent && (
        <Notice>
          Invitation sent to {sent.email}. It is pending until <When at={sent.expiresAt} />.
        </Notice>
      )}
      <h3>Pending invitations</h3>
      <Loaded load={pending} what="pending invitations">
        {({ invites }) =>
          invites.length === 0 ? (
            <p class="muted">None: everyone invited has joined, or their invitation expired. Invite someone above.</p>
          ) : (
            <Table
              caption="Pending invitations"
              rows={invites}
              rowKey={(i) => i.id}
              columns={[
                { header: 'Email', cell: (i) => i.email },
                { header: 'Role', cell: (i) => roleName(i.role) },
                { header: 'Invited by', cell: (i) => i.invitedBy.email },
                { header: 'Expires', cell: (i) => <When at={i.expiresAt} /> },
              ]}
            />
          )
        }
      </Loaded>
    </section>
  );
}
