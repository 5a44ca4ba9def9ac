import { useState } from 'preact/hooks';
import { api, type Inputs } from '../api.ts';
import { useNavigate } from '../router.ts';
import type { ScreenProps } from '../screen.ts';
import { Empty, Link, Loaded, Page, ProblemLine, When } from '../ui/common.tsx';
import { Form, FormProblem, Submit, TextInput } from '../ui/form.tsx';
import { useAction, useLoad, useRowAction } from '../ui/use-load.ts';
import { EndpointStatus, type EventChoice, EventPicker, type EventType, eventsError, eventsLabel } from '../ui/webhooks.tsx';
import { Table } from '../ui/table.tsx';

/** `/webhooks`: the workspace's endpoints with their state (owners and admins); a new one is added on its own page. */
export function Webhooks(_: ScreenProps) {
  const list = useLoad(() => api.webhooks.list.query({ limit: 100 }));
  // The spec's way back for a disabled endpoint: its owner turns it on again from the list, once the receiver is fixed.
  const enable = useRowAction();
  const turnOn = async (id: string) => {
    if (await enable.run(id, () => api.webhooks.enable.mutate({ id }))) list.reload();
  };
  return (
    <Page
      title="Webhooks"
      intro="Leadwire sends each event you choose to your endpoints, signed, and logs every attempt."
      actions={
        <Link to="/webhooks/new" class="button primary">
          Add an endpoint
        </Link>
      }
    >
      <Loaded load={list} what="the endpoints">
        {(page) =>
          page.items.length === 0 ? (
            <Empty title="No endpoints yet">
              <Link to="/webhooks/new">Add an endpoint</Link>: an https:// URL of yours that answers 2xx. Then send it a test from its
              screen.
            </Empty>
          ) : (
            <Table
              caption="Webhook endpoints"
              rows={page.items}
              rowKey={(e) => e.id}
              rowHeader={false}
              columns={[
                {
                  header: 'Endpoint',
                  cell: (e) => (
                    <>
                      <Link to={`/webhooks/${e.id}`}>{e.url}</Link>
                      {e.description && <div class="muted">{e.description}</div>}
                    </>
                  ),
                },
                { header: 'Events', cell: (e) => eventsLabel(e.events) },
                {
                  header: 'Status',
                  cell: (e) => (
                    <>
                      <EndpointStatus endpoint={e} />
                      {!e.enabled && (
                        <div>
                          <button
                            type="button"
                            aria-label={`Enable ${e.url}`}
                            disabled={enable.busy === e.id}
                            onClick={() => void turnOn(e.id)}
                          >
                            Enable
                          </button>
                        </div>
                      )}
                      <ProblemLine problem={enable.problemOf(e.id)} />
                    </>
                  ),
                },
                { header: 'Created', cell: (e) => <When at={e.createdAt} /> },
              ]}
            />
          )
        }
      </Loaded>
    </Page>
  );
}

/** `/webhooks/new`: adding an endpoint is a page of its own, reached from the list, nothing ticked in advance. */
export function NewEndpoint(_: ScreenProps) {
  const types = useLoad(() => api.webhooks.eventTypes.query());
  return (
    <Page title="Add an endpoint" intro={<Link to="/webhooks">All endpoints</Link>}>
      <Loaded load={types} what="the event catalogue">
        {(catalogue) => <CreateEndpoint types={catalogue} />}
      </Loaded>
    </Page>
  );
}

function CreateEndpoint({ types }: { types: EventType[] }) {
  const navigate = useNavigate();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventChoice>([]);
  const create = useAction(async () => {
    const made = await api.webhooks.create.mutate({
      url: url.trim(),
      events: (events === '*' ? ['*'] : events) as Inputs['webhooks']['create']['events'],
      description: description.trim() || null,
    });
    navigate(`/webhooks/${made.id}`);
  });
  const fields = create.problem?.fields ?? {};
  return (
    <Form onSubmit={create.run} label="Add an endpoint" problem={create.problem}>
      <FormProblem
        problem={create.problem}
        fields={['url', 'description', 'events', ...Object.keys(fields).filter((f) => f.startsWith('events.'))]}
      />
      <TextInput
        label="URL"
        type="url"
        hint="https:// only, without a user name or password; it must answer 2xx within 10 seconds."
        placeholder="https://hooks.example.com/leadwire"
        value={url}
        onValue={setUrl}
        error={fields.url}
        required
      />
      <TextInput
        label="Description (optional)"
        hint="A note for your team, e.g. CRM sync."
        value={description}
        onValue={setDescription}
        error={fields.description}
      />
      <EventPicker types={types} value={events} onValue={setEvents} error={eventsError(fields)} />
      <div>
        <Submit busy={create.busy} busyLabel="Adding…">
          Add endpoint
        </Submit>
      </div>
    </Form>
  );
}
