import { useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { useNavigate } from '../router.ts';
import type { ScreenProps } from '../screen.ts';
import { Copyable, Empty, Link, Loaded, Notice, Page, When } from '../ui/common.tsx';
import { SubmissionsTable } from '../ui/forms.tsx';
import { useLoad } from '../ui/use-load.ts';
import { FormEditor } from './form-editor.tsx';
import { Table } from '../ui/table.tsx';

type FormView = Outputs['forms']['get'];

/** The form just created in this tab: its screen says so once (the editor that made it is gone by then). */
let justCreated: string | null = null;

const NewFormLink = () => (
  <Link to="/forms/new" class="button">
    New form
  </Link>
);

/** Every form of the workspace; any member builds forms, so everyone is offered every action. */
export function Forms(_: ScreenProps) {
  const forms = useLoad(() => api.forms.list.query({ limit: 100 }));
  return (
    <Page
      title="Forms"
      intro="Forms on your website or on a page Leadwire hosts: each submission becomes a contact in a pipeline."
      actions={<NewFormLink />}
    >
      <Loaded load={forms} what="the forms">
        {({ items }) =>
          items.length === 0 ? (
            <Empty title="No forms yet">
              <p>
                Create a form, publish it, then share its hosted link or paste its embed snippet into your website.{' '}
                <Link to="/forms/new">Create your first form</Link>.
              </p>
            </Empty>
          ) : (
            <Table
              caption="Forms, newest first"
              rows={items}
              rowKey={(f) => f.id}
              rowHeader={false}
              columns={[
                { header: 'Name', cell: (f) => <Link to={`/forms/${f.id}`}>{f.name}</Link> },
                {
                  header: 'Status',
                  cell: (f) => (f.published ? <span class="badge on">published</span> : <span class="badge off">not published</span>),
                },
                { header: 'Fields', cell: (f) => f.fields.map((x) => x.label).join(', ') },
                { header: 'Created', cell: (f) => <When at={f.createdAt} /> },
              ]}
            />
          )
        }
      </Loaded>
    </Page>
  );
}

export function NewForm(_: ScreenProps) {
  const navigate = useNavigate();
  const pipelines = useLoad(() => api.pipelines.list.query());
  return (
    <Page title="New form" intro={<Link to="/forms">Back to the forms</Link>}>
      <Loaded load={pipelines} what="the pipelines">
        {({ items }) => (
          <FormEditor
            pipelines={items}
            onSaved={(form) => {
              justCreated = form.id;
              navigate(`/forms/${form.id}`, { replace: true });
            }}
          />
        )}
      </Loaded>
    </Page>
  );
}

/** One form: where to share it, what it received, and its editor. */
export function FormScreen({ params }: ScreenProps) {
  const id = params.id!;
  const loaded = useLoad(async () => {
    const [form, pipelines] = await Promise.all([api.forms.get.query({ id }), api.pipelines.list.query()]);
    return { form, pipelines: pipelines.items };
  }, [id]);
  const [notice, setNotice] = useState(() => {
    const created = justCreated === id;
    justCreated = null;
    return created ? 'Form created. Share it with the hosted link or paste the embed snippet into your website.' : null;
  });
  return (
    <Loaded load={loaded} what="the form">
      {({ form, pipelines }) => (
        <Page title={form.name} intro={<Link to="/forms">Back to the forms</Link>}>
          {notice && <Notice>{notice}</Notice>}
          <Share form={form} />
          <Submissions form={form} />
          <h2>Edit the form</h2>
          {/* Keyed by the saved version: a save shows the server's view of the form. */}
          <FormEditor
            key={form.updatedAt}
            form={form}
            pipelines={pipelines}
            onSaving={() => setNotice(null)}
            onSaved={() => {
              setNotice('Saved.');
              loaded.reload();
            }}
          />
        </Page>
      )}
    </Loaded>
  );
}

function Share({ form }: { form: FormView }) {
  return (
    <section class="card" aria-labelledby="share-heading">
      <h2 id="share-heading">Share</h2>
      {!form.published && (
        <Notice tone="warn">
          This form is not published: its hosted page and embedded copies answer “not found” until you publish it.
        </Notice>
      )}
      <p>The hosted page, ready to link to from an email or an ad:</p>
      <Copyable label="hosted link" value={form.hostedUrl} />
      <p>
        <a href={form.hostedUrl} target="_blank" rel="noopener">
          Open the hosted page
        </a>{' '}
        <span class="muted">(opens in a new tab)</span>
      </p>
      <p>The embed snippet, to paste where the form goes on your website (it adds the page’s UTM parameters and address):</p>
      <Copyable label="embed snippet" value={form.embedSnippet} multiline />
    </section>
  );
}

function Submissions({ form }: { form: FormView }) {
  const submissions = useLoad(() => api.forms.submissions.query({ id: form.id, limit: 25 }), [form.id]);
  const labels = Object.fromEntries(form.fields.map((f) => [f.id, f.label]));
  return (
    <section aria-labelledby="submissions-heading">
      <h2 id="submissions-heading">Recent submissions</h2>
      <Loaded load={submissions} what="the submissions">
        {({ items }) =>
          items.length === 0 ? (
            <p class="empty">
              No submissions yet. Open the hosted page and send one to see it here, with where it came from.{' '}
              <button type="button" class="link" onClick={submissions.reload}>
                Check again
              </button>
            </p>
          ) : (
            <>
              <SubmissionsTable items={items} labels={labels} />
              <button type="button" onClick={submissions.reload}>
                Refresh
              </button>
            </>
          )
        }
      </Loaded>
    </section>
  );
}
