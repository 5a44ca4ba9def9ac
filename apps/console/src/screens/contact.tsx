import { api, type Outputs } from '../api.ts';
import type { ScreenProps } from '../screen.ts';
import { Link, Loaded, Page, StateBadge } from '../ui/common.tsx';
import { Table } from '../ui/table.tsx';
import { useLoad } from '../ui/use-load.ts';

type Consents = Outputs['consents']['ofContact'];
type Entry = Consents['entries'][number];
type Holding = Consents['purposes'][number];
type Contact = Outputs['contacts']['get']['contact'];

const METHODS: Record<Entry['method'], string> = {
  single_opt_in: 'Single opt-in',
  double_opt_in: 'Double opt-in',
  unsubscribe_link: 'Unsubscribe link',
};

/** Evidence is read against other records (a mail log, a regulator's question): one zone for everyone, said in words. */
const utc = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });
function AtUtc({ at }: { at: string }) {
  return <time dateTime={at}>{utc.format(new Date(at))} UTC</time>;
}

const nameOf = (c: Contact) => [c.firstName, c.lastName].filter(Boolean).join(' ') || c.email || 'Unnamed contact';

function status(e: Entry): string {
  if (e.status === 'pending') return e.expired ? 'Pending (link expired)' : 'Pending';
  if (e.confirms) return 'Granted (confirmed)';
  return e.status[0]!.toUpperCase() + e.status.slice(1);
}

const none = (what: string) => <span class="muted">{what}</span>;

/**
 * `/contacts/:id`: a contact's name and email and its consent record, read-only (consent is recorded only by forms,
 * their confirmation pages and unsubscribe links): what holds now per purpose, then every entry as evidence.
 */
export function ContactScreen({ params }: ScreenProps) {
  const id = params.id!;
  const load = useLoad(() => Promise.all([api.contacts.get.query({ id, timelineLimit: 1 }), api.consents.ofContact.query({ id })]), [id]);
  return (
    <Page title="Contact">
      <Loaded load={load} what="the contact">
        {([{ contact }, consents]) => (
          <>
            <section class="card" aria-labelledby="contact-name">
              <h2 id="contact-name">{nameOf(contact)}</h2>
              <dl class="facts">
                <dt>Email</dt>
                <dd>{contact.email ?? none('none')}</dd>
              </dl>
            </section>
            <section class="card" aria-labelledby="consent-now">
              <h2 id="consent-now">Consent now</h2>
              {consents.purposes.length === 0 ? (
                <p class="muted">None.</p>
              ) : (
                <Table
                  caption="Consent now, by purpose"
                  rows={consents.purposes}
                  rowKey={(p) => p.purpose}
                  columns={[
                    { header: 'Purpose', cell: (p: Holding) => <code>{p.purpose}</code> },
                    { header: 'State', cell: (p) => <StateBadge on={p.granted}>{p.granted ? 'Granted' : 'Withdrawn'}</StateBadge> },
                    { header: 'Since (UTC)', cell: (p) => <AtUtc at={p.since} /> },
                    { header: 'Method', cell: (p) => METHODS[p.method] },
                  ]}
                />
              )}
            </section>
            <section class="card" aria-labelledby="consent-history">
              <h2 id="consent-history">Consent history</h2>
              <p class="hint">Newest first; times in UTC. Only the person changes it (forms and their links).</p>
              {consents.entries.length === 0 ? (
                <p class="muted">None.</p>
              ) : (
                <Table
                  caption="Consent history"
                  rows={consents.entries}
                  rowKey={(e) => e.id}
                  columns={[
                    { header: 'Recorded (UTC)', cell: (e: Entry) => <AtUtc at={e.at} /> },
                    { header: 'Purpose', cell: (e) => <code>{e.purpose}</code> },
                    { header: 'Answer', cell: status },
                    { header: 'Text shown', class: 'wrap', cell: (e) => e.text ?? none('not recorded') },
                    { header: 'Version', cell: (e) => e.version ?? none('none') },
                    { header: 'Method', cell: (e) => METHODS[e.method] },
                    {
                      header: 'Form',
                      cell: (e) =>
                        e.formId ? (
                          <Link to={`/forms/${e.formId}`}>{e.formName ?? 'Form'}</Link>
                        ) : e.formName ? (
                          `${e.formName} (deleted)`
                        ) : (
                          none('none')
                        ),
                    },
                    { header: 'Page', class: 'wrap', cell: (e) => e.pageUrl ?? none('none') },
                  ]}
                />
              )}
            </section>
          </>
        )}
      </Loaded>
    </Page>
  );
}
