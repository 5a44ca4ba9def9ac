/**
 * Cursor pages turned into async iterables, resumable at any item. The API's cursors name page boundaries; a loop that
 * stops in the middle of a page needs a position there too. So the iterator's `cursor`, inside a page, is the page's
 * own cursor plus the id of the last item received (`<cursor>.<id>`: API cursors are base64url, never holding a dot);
 * given back as a start, the page is read again and everything up to and including that id is passed over. Records
 * only move forward in their order (a changed contact moves to the end), so the page read again still starts with what
 * was received before; when that id is no longer there (it moved on, or was deleted), the whole page is new.
 */

/** One page as the API answers it: `nextCursor` is null after the last page; `hasMore` false (events) means caught up. */
export interface Page<T> {
  /** The page's items, in the listing's order. */
  items: T[];
  /** Where the next page starts: pass it as the cursor (`after` for events) of a later call to continue there. */
  nextCursor: string | null;
  /** Events only: true means another page is ready now; false means caught up (call again later with `nextCursor`). */
  hasMore?: boolean;
}

/**
 * A listing that pages for you. `for await (const item of listing)` yields every item, fetching one page at a time
 * only as the loop asks for more (never ahead). `pages()` yields whole pages. Each page is one request, retried like
 * any call on 429, 5xx, network errors and time-outs.
 */
export interface Paged<T, P extends Page<T> = Page<T>> extends AsyncIterable<T> {
  /**
   * The position just after the last item the loop received (or after the last page `pages()` yielded), to save and
   * pass back as `cursor` (`after` for events) with the same other options: the new listing starts with the very next
   * item, nothing repeated, nothing skipped. Before the first item it is the start given.
   */
  readonly cursor: string | undefined;
  /** The pages themselves, from the same start: `{ items, nextCursor }` (and `hasMore` for events). */
  pages(): AsyncIterable<P>;
}

/** Builds a {@link Paged} over `get`, which fetches the page starting at a cursor (undefined: the listing's start). */
export function paged<T extends { id: string }, P extends Page<T>>(
  get: (cursor: string | undefined) => Promise<P>,
  start: string | undefined,
): Paged<T, P> {
  // Each page with the cursor that fetched it ('' for the listing's start), which the item positions are built on.
  async function* walk(): AsyncGenerator<[string, P], void, undefined> {
    const dot = start?.lastIndexOf('.') ?? -1;
    let at = dot < 0 ? start : start!.slice(0, dot) || undefined;
    let skipThrough = dot < 0 ? undefined : start!.slice(dot + 1);
    for (;;) {
      const page = await get(at);
      if (skipThrough !== undefined) {
        // Not found: those items left the page (deleted, or a contact updated since, which comes again later).
        page.items = page.items.slice(page.items.findIndex((i) => i.id === skipThrough) + 1);
        skipThrough = undefined;
      }
      yield [at ?? '', page];
      if (page.nextCursor === null || page.hasMore === false) return;
      at = page.nextCursor;
    }
  }
  // The position after a whole page: its next cursor, else (the last page) after its last item.
  const past = (at: string, page: P) => {
    const last = page.items.at(-1);
    self.cursor = page.nextCursor ?? (last ? `${at}.${last.id}` : self.cursor);
  };
  const self = {
    cursor: start,
    async *pages() {
      for await (const [at, page] of walk()) {
        past(at, page);
        yield page;
      }
    },
    async *[Symbol.asyncIterator]() {
      for await (const [at, page] of walk()) {
        for (const item of page.items) {
          self.cursor = `${at}.${item.id}`;
          yield item;
        }
        past(at, page);
      }
    },
  };
  return self;
}
