import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { Empty, Link, Loaded, Page, StateBadge, When } from '../ui/common.tsx';
import { Form, FormProblem, Submit, TextInput } from '../ui/form.tsx';
import { useAction, useLoad } from '../ui/use-load.ts';
import { type DraftStep, IntakeUrlOnce, newStep, type Pipeline, StepsEditor, stepsInput } from '../ui/workflows.tsx';
import { Table } from '../ui/table.tsx';

/**
 * Workflows: the list, and for owners and admins the form that creates one; its intake URL is shown once, right here,
 * after creation (the server keeps only a hash).
 */
export function Workflows({ me }: ScreenProps) {
  const manager = isManager(me);
  const list = useLoad(() => api.workflows.list.query({ limit: 100 }));
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ id: string; name: string; url: string } | null>(null);
  return (
    <Page
      title="Workflows"
      intro="A workflow runs its steps for a contact each time another system POSTs JSON with an email to its intake URL."
      actions={
        manager &&
        !creating && (
          <button type="button" class="primary" onClick={() => (setCreating(true), setCreated(null))}>
            New workflow
          </button>
        )
      }
    >
      {created && (
        <>
          <p>
            <Link to={`/workflows/${created.id}`}>{created.name}</Link> is created.
          </p>
          <IntakeUrlOnce url={created.url} onDone={() => setCreated(null)} />
        </>
      )}
      {creating && (
        <CreateWorkflow
          onCancel={() => setCreating(false)}
          onCreated={(wf) => {
            setCreating(false);
            setCreated(wf);
            list.reload();
          }}
        />
      )}
      {!manager && <p class="muted">Owners and admins create and change workflows; you can see them and their runs.</p>}
      <Loaded load={list} what="workflows">
        {(page) =>
          page.items.length === 0 ? (
            <Empty title="No workflows yet">
              {manager
                ? 'Create one with New workflow: name it, pick its steps, then give its intake URL to the system that should start it.'
                : 'An owner or admin of your workspace can create one.'}
            </Empty>
          ) : (
            <>
              {page.nextCursor && <p class="muted">The newest 100 workflows are shown.</p>}
              <Table
                caption="Workflows"
                rows={page.items}
                rowKey={(wf) => wf.id}
                rowHeader={false}
                columns={[
                  { header: 'Name', cell: (wf) => <Link to={`/workflows/${wf.id}`}>{wf.name}</Link> },
                  { header: 'Trigger', cell: () => 'Webhook received' },
                  { header: 'Steps', cell: (wf) => wf.steps.length },
                  { header: 'Status', cell: (wf) => <StateBadge on={wf.enabled}>{wf.enabled ? 'Enabled' : 'Disabled'}</StateBadge> },
                  { header: 'Created', cell: (wf) => <When at={wf.createdAt} /> },
                ]}
              />
            </>
          )
        }
      </Loaded>
    </Page>
  );
}

function CreateWorkflow(props: { onCancel: () => void; onCreated: (wf: { id: string; name: string; url: string }) => void }) {
  const [name, setName] = useState('');
  const [steps, setSteps] = useState<DraftStep[]>([newStep()]);
  const pipelines = useLoad(() => api.pipelines.list.query());
  const create = useAction(async () => {
    const wf = await api.workflows.create.mutate({ name, steps: stepsInput(steps) });
    props.onCreated({ id: wf.id, name: wf.name, url: wf.intakeUrl });
  });
  const fields = create.problem?.fields ?? {};
  const shown = ['name', 'steps', ...steps.flatMap((_, i) => Object.keys(fields).filter((f) => f.startsWith(`steps.${i}.`)))];
  const list: Pipeline[] = pipelines.state === 'ready' ? pipelines.data.items : [];
  return (
    <section class="card" aria-labelledby="new-workflow">
      <h2 id="new-workflow">New workflow</h2>
      <Form onSubmit={() => create.run()} label="New workflow">
        <FormProblem problem={create.problem} fields={shown} />
        <TextInput label="Name" value={name} onValue={setName} error={fields.name} required hint="For you, e.g. Webinar sign-ups." />
        <p class="hint">Trigger: Webhook received (a JSON POST to the workflow's intake URL, naming the contact by email or contactId).</p>
        <StepsEditor steps={steps} onSteps={setSteps} pipelines={list} problem={create.problem} />
        <div class="row-actions">
          <Submit busy={create.busy} busyLabel="Creating…">
            Create workflow
          </Submit>
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </Form>
    </section>
  );
}
