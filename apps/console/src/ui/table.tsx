import type { ComponentChildren } from 'preact';

export interface Column<T> {
  /** The column's heading; read by screen readers with each cell. */
  header: string;
  cell: (row: T) => ComponentChildren;
  /** Heading kept for screen readers only (a column of buttons: "Actions"). */
  hidden?: boolean;
  /** The class of the column's cells. */
  class?: string;
}

/**
 * The console's lists (keys, members, trash, deliveries, ...): a caption for screen readers, a heading per column and,
 * unless `rowHeader` is false, each row named by its first cell (`<th scope="row">`), which is what a row's buttons
 * and the tests find it by.
 */
export function Table<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  rowHeader?: boolean;
  class?: string;
  busy?: boolean;
}) {
  const [first, ...rest] = props.columns;
  const named = props.rowHeader !== false;
  // On a narrow screen each row becomes a card of labelled cells (console.css); `data-label` carries the heading.
  return (
    <table class={props.class ? `list ${props.class}` : 'list'} aria-busy={props.busy || undefined}>
      <caption class="visually-hidden">{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c.header} scope="col">
              {c.hidden ? <span class="visually-hidden">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={props.rowKey(row)}>
            {first &&
              (named ? (
                <th scope="row" class={first.class} data-label={first.hidden ? undefined : first.header}>
                  {first.cell(row)}
                </th>
              ) : (
                <td class={first.class} data-label={first.hidden ? undefined : first.header}>
                  {first.cell(row)}
                </td>
              ))}
            {rest.map((c) => (
              <td key={c.header} class={c.class} data-label={c.hidden ? undefined : c.header}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
