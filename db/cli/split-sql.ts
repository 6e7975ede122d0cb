/**
 * Splits SQL text into statements at each `;` that is outside a string, a quoted name or
 * a comment. A trigger body (`BEGIN … ; … END;`) comes out in several pieces: the caller
 * joins a piece with the next one while SQLite reports it as incomplete.
 *
 * @example
 * ```ts
 * splitStatements("select 1; select ';'"); // ['select 1;', " select ';'"]
 * ```
 */
export function splitStatements(sql: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    const next = sql[i + 1];
    if (ch === "'" || ch === '"' || ch === '`') {
      i = skipQuoted(sql, i, ch);
    } else if (ch === '[') {
      const end = sql.indexOf(']', i + 1);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '-' && next === '-') {
      const end = sql.indexOf('\n', i + 2);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (ch === ';') {
      pieces.push(sql.slice(start, i + 1));
      start = i + 1;
      i += 1;
    } else {
      i += 1;
    }
  }
  pieces.push(sql.slice(start));
  return pieces.filter((piece) => !isBlank(piece));
}

/** True when the text holds nothing but whitespace, comments and semicolons. */
export function isBlank(sql: string): boolean {
  return (
    sql
      .replace(/--[^\n]*(\n|$)/g, '')
      .replace(/\/\*[\s\S]*?(\*\/|$)/g, '')
      .replace(/[\s;]/g, '') === ''
  );
}

/** Index just past the closing quote; a doubled quote is an escaped one. */
function skipQuoted(sql: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i += 1;
    }
  }
  return sql.length;
}
