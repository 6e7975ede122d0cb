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

/**
 * Splits Postgres SQL into statements at each `;` outside a string (`'…'`, `E'…'` with
 * backslash escapes), a quoted name, a dollar-quoted body (`$$…$$`, `$fn$…$fn$`) or a comment
 * (nested block comments too; a `--` comment ends at a `\n` or a `\r`, as Postgres ends it).
 * Blank pieces are dropped.
 *
 * @example
 * ```ts
 * splitPostgresStatements('do $$ begin perform 1; end $$; select 2');
 * // ['do $$ begin perform 1; end $$;', ' select 2']
 * ```
 */
export function splitPostgresStatements(sql: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i, i + 2);
    const dollar = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 64));
    if (dollar !== null && !/[A-Za-z0-9_$]/.test(sql[i - 1] ?? '')) {
      const end = sql.indexOf(dollar[0], i + dollar[0].length);
      i = end === -1 ? sql.length : end + dollar[0].length;
    } else if (/^[eE]'/.test(rest) && !/[A-Za-z0-9_$]/.test(sql[i - 1] ?? '')) {
      i = skipEscaped(sql, i + 1);
    } else if (rest[0] === "'" || rest[0] === '"') {
      i = skipQuoted(sql, i, rest[0]);
    } else if (rest === '--') {
      i = lineEnd(sql, i + 2);
    } else if (rest === '/*') {
      i = skipNestedComment(sql, i);
    } else if (rest[0] === ';') {
      pieces.push(sql.slice(start, i + 1));
      start = i += 1;
    } else {
      i += 1;
    }
  }
  pieces.push(sql.slice(start));
  return pieces.filter((piece) => !isBlank(piece));
}

/**
 * The statement's first `count` words, lower case, comments and whitespace skipped.
 *
 * @example
 * ```ts
 * leadingWords('-- switch\n Set  TRANSACTION read write', 2); // 'set transaction'
 * ```
 */
export function leadingWords(statement: string, count: number): string {
  const words: string[] = [];
  let i = 0;
  while (i < statement.length && words.length < count) {
    if (statement.startsWith('--', i)) {
      i = lineEnd(statement, i + 2);
    } else if (statement.startsWith('/*', i)) {
      i = skipNestedComment(statement, i);
    } else {
      const word = /^[A-Za-z_]+/.exec(statement.slice(i));
      if (word === null && !/\s/.test(statement[i]!)) break;
      if (word !== null) words.push(word[0].toLowerCase());
      i += word === null ? 1 : word[0].length;
    }
  }
  return words.join(' ');
}

/** Index just past the line a Postgres `--` comment ends with: a `\n` or a `\r` ends it. */
function lineEnd(sql: string, from: number): number {
  const end = sql.slice(from).search(/[\r\n]/);
  return end === -1 ? sql.length : from + end + 1;
}

/** Index just past an `E'…'` string that opens at `open`: a backslash escapes what follows. */
function skipEscaped(sql: string, open: number): number {
  let i = open + 1;
  while (i < sql.length) {
    if (sql[i] === '\\') i += 2;
    else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
    else if (sql[i] === "'") return i + 1;
    else i += 1;
  }
  return sql.length;
}

/** Index just past a block comment that opens at `open`; Postgres nests them. */
function skipNestedComment(sql: string, open: number): number {
  let depth = 0;
  let i = open;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth += 1;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else {
      i += 1;
    }
  }
  return sql.length;
}

/** True when the text holds nothing but whitespace, comments and semicolons. */
export function isBlank(sql: string): boolean {
  return (
    sql
      .replace(/--[^\r\n]*([\r\n]|$)/g, '')
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
