import { useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { Copyable, Link, Loaded, Notice, Page } from '../ui/common.tsx';
import { Form, FormProblem, Submit, TextInput } from '../ui/form.tsx';
import { useAction, useLoad } from '../ui/use-load.ts';

type Settings = Outputs['tracking']['settings'];

/**
 * What goes on the workspace's website: the tracking and lead-capture snippets (with the workspace id and this
 * server's address, from the server) and the site domain whose links in texts are tracked.
 */
export function Website({ me }: ScreenProps) {
  const loaded = useLoad(async () => {
    const [snippets, settings] = await Promise.all([api.tracking.snippets.query(), api.tracking.settings.query()]);
    return { snippets, settings };
  });
  return (
    <Page title="Website" intro="Paste these snippets into your website’s pages to see who visits and to capture leads.">
      <Loaded load={loaded} what="the website settings">
        {({ snippets, settings }) => (
          <>
            <section class="card" aria-labelledby="tracking-heading">
              <h2 id="tracking-heading">Tracking snippet</h2>
              <p>
                Paste it into every page. It records page views, and once a visitor fills in a form, their earlier visits join their
                contact. Visitors who ask not to be tracked (Global Privacy Control, Do Not Track) are only counted.
              </p>
              <Copyable label="tracking snippet" value={snippets.tracking} multiline />
            </section>
            <section class="card" aria-labelledby="capture-heading">
              <h2 id="capture-heading">Lead-capture snippet</h2>
              <p>
                Shows a contact form (name, email, phone, message) where the first line is, and also captures the other forms with an email
                field on the same page as they are sent.
              </p>
              <Copyable label="lead-capture snippet" value={snippets.leadCapture} multiline />
              <p class="muted">
                Workspace id <code>{snippets.organizationId}</code>. Neither snippet needs a key. To send contacts to the API from your own
                site’s code instead, create a Public key in <Link to="/keys">API keys</Link>.
              </p>
            </section>
            <SiteDomain settings={settings} mayEdit={isManager(me)} onSaved={loaded.reload} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function SiteDomain(props: { settings: Settings; mayEdit: boolean; onSaved: () => void }) {
  const [domain, setDomain] = useState(props.settings.siteDomain ?? '');
  const [notice, setNotice] = useState<string | null>(null);
  const save = useAction(async (value: string | null) => {
    setNotice(null);
    const saved = await api.tracking.updateSettings.mutate({ siteDomain: value });
    setDomain(saved.siteDomain ?? '');
    setNotice(saved.siteDomain ? `Links to ${saved.siteDomain} in your texts are now tracked.` : 'Link tracking is off.');
    props.onSaved();
  });
  const current = props.settings.siteDomain;
  return (
    <section class="card" aria-labelledby="domain-heading">
      <h2 id="domain-heading">Site domain for tracked links</h2>
      <p>
        Links to this domain (or its subdomains) in the texts Leadwire sends become tracked links: a click is recorded on the contact, and
        the tracking snippet then recognises the visitor.
      </p>
      {props.mayEdit ? (
        <Form onSubmit={() => save.run(domain.trim() || null)} label="Site domain">
          <FormProblem problem={save.problem} fields={['siteDomain']} />
          <TextInput
            label="Site domain"
            hint="Such as example.com; an address is reduced to its domain. Leave empty to turn link tracking off."
            value={domain}
            onValue={setDomain}
            error={save.problem?.fields.siteDomain}
          />
          {notice && <Notice>{notice}</Notice>}
          <div>
            <Submit busy={save.busy} busyLabel="Saving…">
              Save site domain
            </Submit>
          </div>
        </Form>
      ) : (
        <p>
          {current ? (
            <>
              Links to <strong>{current}</strong> are tracked.
            </>
          ) : (
            'Link tracking is off: no site domain is set.'
          )}{' '}
          <span class="muted">Owners and admins can change it.</span>
        </p>
      )}
    </section>
  );
}
