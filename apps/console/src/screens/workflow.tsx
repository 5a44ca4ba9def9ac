import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useNavigate } from '../router.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { ConfirmAction, Link, Loaded, Notice, Page, ProblemLine, StateBadge, When } from '../ui/common.tsx';
import { useAction, useLoad } from '../ui/use-load.ts';
import { describeStep, IntakeUrlOnce, type Pipeline, RunStatus, RunSteps, type Workflow } from '../ui/workflows.tsx';
import { Table } from '../ui/table.tsx';

/**
 * One workflow: its intake URL (the hint; the whole URL once more after a rotation), its steps, its recent runs with
 * each step's outcome. Owners and admins rotate, turn it off and on, and delete it; members read.
 */
export function WorkflowDetail({ me, params }: ScreenProps) {
  const id = params.id!;
  const wf = useLoad(() => api.workflows.get.query({ id }), [id]);
  return (
    <Loaded load={wf} what="the workflow">
      {(workflow) => <Detail workflow={workflow} manager={isManager(me)} onChanged={wf.reload} />}
    </Loaded>
  );
}

function Detail({ workflow, manager, onChanged }: { workflow: Workflow; manager: boolean; onChanged: () => void }) {
  const navigate = useNavigate();
  const pipelines = useLoad(() => api.pipelines.list.query());
  const list: Pipeline[] = pipelines.state === 'ready' ? pipelines.data.items : [];
  const [rotated, setRotated] = useState<string | null>(null);
  const rotate = useAction(async () => {
    const answer = await api.workflows.rotateToken.mutate({ id: workflow.id });
    setRotated(answer.intakeUrl);
    onChanged();
  });
  const toggle = useAction(async () => {
    await api.workflows.update.mutate({ id: workflow.id, enabled: !workflow.enabled });
    onChanged();
  });
  const remove = useAction(async () => {
    await api.workflows.delete.mutate({ id: workflow.id });
    navigate('/workflows');
  });
  return (
    <Page
      title={workflow.name}
      intro={
        <>
          <Link to="/workflows">All workflows</Link> · Trigger: Webhook received ·{' '}
          <StateBadge on={workflow.enabled}>{workflow.enabled ? 'Enabled' : 'Disabled'}</StateBadge> · Created{' '}
          <When at={workflow.createdAt} />
        </>
      }
      actions={
        manager && (
          <button type="button" onClick={() => void toggle.run()} disabled={toggle.busy}>
            {workflow.enabled ? 'Turn off' : 'Turn on'}
          </button>
        )
      }
    >
      <ProblemLine problem={toggle.problem} />
      {rotated && <IntakeUrlOnce url={rotated} rotated onDone={() => setRotated(null)} />}

      <h2>Intake URL</h2>
      <p>
        Another system starts this workflow with a JSON POST to its intake URL, naming the contact with <code>email</code> or{' '}
        <code>contactId</code>; everything else in the body is kept on the run. The whole URL was shown once, when it was made; this is its
        beginning, to tell which one is current.
      </p>
      <p>
        <code class="wf-hint">{workflow.intakeUrlHint}</code>
      </p>
      {!workflow.enabled && <Notice tone="warn">The workflow is off: its intake URL answers 404 until it is turned on.</Notice>}
      {manager && (
        <ConfirmAction
          label="Rotate intake URL"
          question="The current URL stops working at once: the system that uses it must get the new one."
          confirmLabel="Rotate now"
          busy={rotate.busy}
          onConfirm={rotate.run}
        />
      )}
      <ProblemLine problem={rotate.problem} />

      <h2>Steps</h2>
      <ol>
        {workflow.steps.map((s, i) => (
          <li key={i}>{describeStep(s, list)}</li>
        ))}
      </ol>

      <Runs id={workflow.id} />

      {manager && (
        <>
          <h2>Delete</h2>
          <p>Its intake URL stops at once; its runs stay on their contacts' timelines.</p>
          <ConfirmAction
            label="Delete workflow"
            question={`Delete ${workflow.name}? This cannot be undone.`}
            confirmLabel={`Delete ${workflow.name} for good`}
            busy={remove.busy}
            onConfirm={remove.run}
          />
          <ProblemLine problem={remove.problem} />
        </>
      )}
    </Page>
  );
}

function Runs({ id }: { id: string }) {
  const runs = useLoad(() => api.workflows.runs.query({ id, limit: 20 }), [id]);
  return (
    <>
      <div class="page-header">
        <h2>Recent runs</h2>
        <div class="actions">
          <button type="button" onClick={runs.reload} disabled={runs.state === 'ready' && runs.refreshing}>
            Refresh runs
          </button>
        </div>
      </div>
      <Loaded load={runs} what="the runs">
        {(page) =>
          page.items.length === 0 ? (
            <p class="empty">
              No runs yet. A POST to the intake URL with <code>{'{"email": "ada@example.com"}'}</code> starts one; it shows here with each
              step's outcome.
            </p>
          ) : (
            <>
              {page.nextCursor && <p class="muted">The newest 20 runs are shown; each is also on its contact's timeline.</p>}
              <Table
                caption="Recent runs, newest first"
                rows={page.items}
                rowKey={(run) => run.id}
                rowHeader={false}
                columns={[
                  { header: 'Received', cell: (run) => <When at={run.createdAt} /> },
                  { header: 'Status', cell: (run) => <RunStatus status={run.status} /> },
                  {
                    header: 'Contact',
                    cell: (run) => (typeof run.payload.email === 'string' ? run.payload.email : (run.contactId ?? 'deleted')),
                  },
                  { header: 'Steps', cell: (run) => <RunSteps run={run} /> },
                ]}
              />
            </>
          )
        }
      </Loaded>
    </>
  );
}
