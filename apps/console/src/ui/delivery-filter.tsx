import { useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { Notice, When } from './common.tsx';
import { Form, FormProblem, Submit, TextInput } from './form.tsx';
import { Table } from './table.tsx';
import { useAction } from './use-load.ts';
import type { Endpoint } from './webhooks.tsx';

type Preview = Outputs['webhooks']['previewFilter'];
/** The endpoint's stored names are the catalogue's subscribable ones (the server checked them when they were saved). */
type EventNames = NonNullable<Parameters<typeof api.webhooks.previewFilter.mutate>[0]['events']>;

const EXAMPLE = '{"contact.tags": "vip", "contact.leadScore": {"$gte": 50}}';

/** The text area's JSON, or why it is not a filter yet (an empty box is "no filter"). */
function parse(text: string): { filter: Record<string, unknown> | null } | { error: string } {
  if (!text.trim()) return { filter: null };
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'The filter must be a JSON object, e.g. ' + EXAMPLE };
    return { filter: v as Record<string, unknown> };
  } catch (e) {
    return { error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * The endpoint's delivery filter (issue 30): edited as JSON, checked by the server on save (its sentence names the bad
 * part), and tried against the workspace's recent events before it is saved.
 */
export function DeliveryFilter({ endpoint: e, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const [text, setText] = useState(e.filter ? JSON.stringify(e.filter, null, 2) : '');
  const [local, setLocal] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const read = () => {
    const parsed = parse(text);
    setLocal('error' in parsed ? parsed.error : null);
    return 'error' in parsed ? undefined : parsed.filter;
  };
  const save = useAction(async () => {
    test.clear();
    setSaved(null);
    const filter = read();
    if (filter === undefined) return;
    await api.webhooks.update.mutate({ id: e.id, filter });
    setSaved(filter ? 'Filter saved: it applies to the events that follow.' : 'Filter removed: every subscribed event is sent.');
    onChanged();
  });
  const test = useAction(async () => {
    save.clear();
    setPreview(null);
    const filter = read();
    if (filter === undefined) return;
    setPreview(await api.webhooks.previewFilter.mutate({ filter, events: e.events as EventNames, limit: 20 }));
  });
  const problem = save.problem ?? test.problem;
  return (
    <section class="card" aria-labelledby="filter-heading">
      <h2 id="filter-heading">Delivery filter</h2>
      <p>
        Only events whose <code>data</code> matches are sent; the others are logged as <em>filtered</em> and do not count toward the hourly
        limit. Leave it empty to send every subscribed event. Operators: <code>$eq</code>, <code>$neq</code>, <code>$in</code>,{' '}
        <code>$nin</code>, <code>$gt</code>, <code>$gte</code>, <code>$lt</code>, <code>$lte</code>, <code>$exists</code>, <code>$and</code>
        , <code>$or</code>.
      </p>
      <Form onSubmit={save.run} label="Delivery filter">
        <FormProblem problem={problem} fields={['filter']} />
        <TextInput
          label="Filter (JSON)"
          hint={
            <>
              For example <code>{EXAMPLE}</code>
            </>
          }
          multiline
          value={text}
          onValue={(v) => {
            setText(v);
            setSaved(null);
            setLocal(null);
            save.clear();
            test.clear();
          }}
          error={local ?? problem?.fields.filter}
        />
        <div class="row-actions">
          <Submit busy={save.busy} busyLabel="Saving…">
            Save filter
          </Submit>
          <button type="button" disabled={test.busy} onClick={() => void test.run()}>
            Test against recent events
          </button>
        </div>
      </Form>
      {saved && <Notice>{saved}</Notice>}
      {preview && <PreviewTable preview={preview} />}
    </section>
  );
}

function PreviewTable({ preview }: { preview: Preview }) {
  if (preview.items.length === 0)
    return (
      <Notice>None of the workspace's {preview.scanned} newest events is of this endpoint's types: nothing to test against yet.</Notice>
    );
  return (
    <>
      <p role="status">
        {preview.matched} of {preview.items.length} recent events would be sent.
      </p>
      <Table
        caption="Recent events against the filter"
        rows={preview.items}
        rowKey={(i) => i.id}
        columns={[
          { header: 'Event', cell: (i) => <code>{i.event}</code> },
          { header: 'When', cell: (i) => <When at={i.timestamp} /> },
          {
            header: 'Would be',
            cell: (i) => (i.matched ? <span class="badge on">Sent</span> : <span class="badge">Filtered</span>),
          },
          { header: 'Data', cell: (i) => <code class="preview-data">{JSON.stringify(i.data).slice(0, 160)}</code> },
        ]}
      />
    </>
  );
}
