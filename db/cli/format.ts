import { visible } from './visible.js';

/** Rows as the CLI prints them: column names plus one array of cell values per row. */
export interface ResultSet {
  columns: string[];
  rows: unknown[][];
}

/**
 * Renders rows as an aligned plain-text table with a header, a rule and a row count.
 * NULL prints as `NULL`, blobs as `<blob N bytes>`, line breaks as a literal `\n` so every
 * row stays on one line, tabs as spaces, and other control characters escaped (see `visible`)
 * so chat text cannot drive the terminal.
 *
 * @example
 * ```ts
 * formatTable({ columns: ['kind', 'n'], rows: [['user', 3]] });
 * // kind  n\n----  -\nuser  3\n(1 row)\n
 * ```
 */
export function formatTable(
  result: ResultSet,
  options: { footer?: boolean; nullText?: string } = {},
): string {
  const nullText = options.nullText ?? 'NULL';
  const columns = result.columns.map((name) => cellText(name, nullText));
  const cells = result.rows.map((row) => row.map((value) => cellText(value, nullText)));
  const numeric = result.columns.map((_, i) =>
    result.rows.some((row) => typeof row[i] === 'number' || typeof row[i] === 'bigint'),
  );
  const widths = columns.map((name, i) =>
    Math.max(name.length, ...cells.map((row) => (row[i] ?? '').length)),
  );
  const line = (values: string[], alignNumbers: boolean) =>
    values
      .map((value, i) => {
        const width = widths[i] ?? 0;
        return alignNumbers && numeric[i] ? value.padStart(width) : value.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  const out = [
    line(columns, false),
    line(
      widths.map((w) => '-'.repeat(w)),
      false,
    ),
    ...cells.map((row) => line(row, true)),
  ];
  if (options.footer ?? true) out.push(rowCount(result.rows.length));
  return `${out.join('\n')}\n`;
}

/** `(1 row)`, `(3 rows)`. */
export function rowCount(n: number): string {
  return `(${n} ${n === 1 ? 'row' : 'rows'})`;
}

/**
 * Renders rows as CSV with a header line, quoted as RFC 4180 says. NULL is an empty field.
 * Lines end with `\n`, as Unix tools expect; `lineEnd: '\r\n'` gives RFC 4180's line ends.
 *
 * @example
 * ```ts
 * formatCsv({ columns: ['a'], rows: [['x,y']] }); // 'a\n"x,y"\n'
 * formatCsv({ columns: ['a'], rows: [['x']] }, { lineEnd: '\r\n' }); // 'a\r\nx\r\n'
 * ```
 */
export function formatCsv(result: ResultSet, options: { lineEnd?: '\n' | '\r\n' } = {}): string {
  const lineEnd = options.lineEnd ?? '\n';
  const field = (value: unknown): string => {
    const text = value === null || value === undefined ? '' : csvText(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const lines = [result.columns, ...result.rows].map((row) => row.map(field).join(','));
  return lines.map((l) => `${l}${lineEnd}`).join('');
}

/**
 * Renders rows as a JSON array of objects keyed by column name (a pretty-printed one).
 * Blobs become base64 strings and bigints numbers when exact, strings otherwise.
 */
export function formatJson(result: ResultSet): string {
  const objects = result.rows.map((row) =>
    Object.fromEntries(result.columns.map((name, i) => [name, jsonValue(row[i])])),
  );
  return `${JSON.stringify(objects, null, 2)}\n`;
}

/** One value as it should appear in JSON output. */
export function jsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'bigint') {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

function cellText(value: unknown, nullText: string): string {
  if (value === null || value === undefined) return nullText;
  if (Buffer.isBuffer(value)) return `<blob ${value.length} bytes>`;
  return visible(String(value).replace(/\r?\n/g, '\\n').replace(/\t/g, ' '));
}

function csvText(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return String(value);
}

/** `1234567` → `1,234,567`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
