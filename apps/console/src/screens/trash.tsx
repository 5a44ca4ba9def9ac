import { useState } from 'preact/hooks';
import { api, type Outputs } from '../api.ts';
import { isManager, type ScreenProps } from '../screen.ts';
import { Empty, Loaded, Notice, Page, ProblemLine, When } from '../ui/common.tsx';
import { Table } from '../ui/table.tsx';
import { useLoad, useRowAction } from '../ui/use-load.ts';

type TrashPage = Outputs['contacts']['trash'];
type Trashed = TrashPage['items'][number];

/** The most the server answers in one page; "Show more" follows the cursor. */
const PAGE = 100;

const nameOf = (c: Trashed) => [c.firstName, c.lastName].filter(Boolean).join(' ') || c.email || 'Unnamed contact';

function left(c: Trashed): string {
  if (!c.restorable) return 'Window closed: it will be deleted for good tonight';
  if (c.daysLeft <= 0) return 'Less than a day';
  return c.daysLeft === 1 ? '1 day' : `${c.daysLeft} days`;
}

/** Trash: deleted contacts and how long each can still come back; owners and admins restore (the server's rule). */
export function Trash({ me }: ScreenProps) {
  const [extraPages, setExtraPages] = useState(0);
  const load = useLoad(async () => {
    // Reloads (after a restore) fetch every page shown so far again, so the list does not shrink back to one page.
    let cursor: string | undefined;
    const items: Trashed[] = [];
    let next: string | null = null;
    for (let i = 0; i <= extraPages; i++) {
      const page: TrashPage = await api.contacts.trash.query({ limit: PAGE, ...(cursor ? { cursor } : {}) });
      items.push(...page.items);
      next = page.nextCursor;
      if (!next) break;
      cursor = next;
    }
    return { items, next };
  }, [extraPages]);
  const [restored, setRestored] = useState<string | null>(null);
  const row = useRowAction();
  const restore = async (c: Trashed) => {
    if (!(await row.run(c.id, () => api.contacts.restore.mutate({ id: c.id })))) return;
    setRestored(nameOf(c));
    load.reload();
  };
  const manager = isManager(me);
  return (
    <Page
      title="Trash"
      intro={
        manager
          ? 'Deleted contacts stay here for 30 days; restore one to bring it back with its history. After that they are deleted for good.'
          : 'Deleted contacts stay here for 30 days, then are deleted for good. Only owners and admins of your workspace can restore them: ask one of them.'
      }
    >
      {restored && <Notice>{restored} is back in your contacts.</Notice>}
      <Loaded load={load} what="the trash">
        {({ items, next }) =>
          items.length === 0 ? (
            <Empty title="Trash is empty">
              <p>Contacts you delete land here and can be restored for 30 days.</p>
            </Empty>
          ) : (
            <>
              <Table
                caption="Deleted contacts"
                rows={items}
                rowKey={(c) => c.id}
                columns={[
                  { header: 'Contact', cell: nameOf },
                  { header: 'Email', cell: (c) => c.email ?? <span class="muted">none</span> },
                  { header: 'Deleted', cell: (c) => <When at={c.deletedAt} /> },
                  { header: 'Left to restore', cell: left },
                  ...(manager
                    ? [
                        {
                          header: 'Actions',
                          hidden: true,
                          cell: (c: Trashed) => (
                            <>
                              {c.restorable && (
                                <button
                                  type="button"
                                  aria-label={`Restore ${nameOf(c)}`}
                                  disabled={row.busy === c.id}
                                  onClick={() => void restore(c)}
                                >
                                  Restore
                                </button>
                              )}
                              <ProblemLine problem={row.problemOf(c.id)} />
                            </>
                          ),
                        },
                      ]
                    : []),
                ]}
              />
              {next && (
                <button type="button" onClick={() => setExtraPages((n) => n + 1)}>
                  Show more
                </button>
              )}
            </>
          )
        }
      </Loaded>
    </Page>
  );
}
