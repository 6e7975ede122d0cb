/**
 * Markdown rendered in a platform's dialect and cut into messages that each fit its limit and
 * each render on their own: a part never ends inside a code block, a table or a styled span —
 * what must be cut is closed at the end of one part and opened again at the start of the next.
 * Parts end at block boundaries (a blank line, a fence, a table) where they can, then at line
 * ends, then between words, and only then inside a word (at a grapheme boundary).
 *
 * A cut depends only on the lines before it and the line after it, so a growing text (a
 * streamed answer) keeps its parts as it grows, except the last two and the parts holding the
 * line still being written (whose emphasis may not be closed yet).
 *
 * @example
 * ```ts
 * const parts = renderMarkdown('**Hi**', telegramDialect); // ['<b>Hi</b>']
 * ```
 */
import { parseMarkdown } from './markdown.js';
import type { Block, Line, Mark, Run } from './markdown.js';

/** How a platform writes text, marks, lines and code. */
export interface Dialect {
  /** The most a part may hold, as `size` measures it. */
  limit: number;
  /** How long a part is for the limit (default: UTF-16 code units of the text sent). */
  size?: (text: string) => number;
  /** Plain text, escaped as the platform needs. */
  text(text: string, marks: readonly Mark[]): string;
  /** A platform token (`<@U123>`), kept whole. */
  atom(text: string): string;
  /** Opens `mark` inside `outer` (return '' where the platform cannot nest it). */
  open(mark: Mark, outer: readonly Mark[]): string;
  close(mark: Mark, outer: readonly Mark[]): string;
  /** A line: its lead (list marker), heading level and quote around the rendered runs. */
  line(line: Line, body: string): string;
  /** Rendered lines of one block, joined (default: with newlines). */
  join?(lines: readonly Line[], rendered: readonly string[]): string;
  /** A code block, its text as written. */
  code(lang: string, code: string): string;
}

/**
 * `markdown` in `dialect`, as the texts of the messages to send, in order. Blank text gives no
 * parts.
 */
export function renderMarkdown(markdown: string, dialect: Dialect): string[] {
  const size = dialect.size ?? ((text: string) => text.length);
  const parts = new Parts(dialect.limit, size);
  for (const block of parseMarkdown(markdown)) {
    if (block.kind === 'lines') {
      parts.block(
        block.lines,
        (lines) => renderLines(lines, dialect),
        (line) => splitLine(line, (l) => size(renderLines([l], dialect)) <= dialect.limit),
      );
    } else if (block.kind === 'table' || block.code.trim() !== '') {
      const { lang: written, code } =
        block.kind === 'code' ? block : { lang: '', code: tableText(block) };
      // A language whose fence takes half a part leaves the code no room: the code goes bare.
      const lang = size(dialect.code(written, '')) * 2 <= dialect.limit ? written : '';
      parts.block(
        code.split('\n'),
        (lines) => dialect.code(lang, lines.join('\n')),
        (line) => hardCut(line, (piece) => size(dialect.code(lang, piece)) <= dialect.limit),
      );
    }
  }
  return parts.done();
}

/** Renders lines of prose. */
export function renderLines(lines: readonly Line[], dialect: Dialect): string {
  const rendered = lines.map((line) => dialect.line(line, renderRuns(line.runs, dialect)));
  return dialect.join ? dialect.join(lines, rendered) : rendered.join('\n');
}

/** Runs with their marks opened and closed around them, always properly nested. */
export function renderRuns(runs: readonly Run[], dialect: Dialect): string {
  let out = '';
  const stack: Mark[] = [];
  for (const run of runs) {
    let common = 0;
    while (common < stack.length && stack[common] === run.marks[common]) common++;
    while (stack.length > common) {
      const mark = stack.pop() as Mark;
      out += dialect.close(mark, stack);
    }
    for (const mark of run.marks.slice(common)) {
      out += dialect.open(mark, stack);
      stack.push(mark);
    }
    out += run.atom ? dialect.atom(run.text) : dialect.text(run.text, stack);
  }
  while (stack.length > 0) {
    const mark = stack.pop() as Mark;
    out += dialect.close(mark, stack);
  }
  return out;
}

/** A table as aligned plain text, for a code block: every platform shows that legibly. */
export function tableText(table: Extract<Block, { kind: 'table' }>): string {
  const width = (text: string) =>
    [...segmenter.segment(text)].reduce((n, { segment }) => n + (WIDE.test(segment) ? 2 : 1), 0);
  const columns = Math.max(...table.rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, c) =>
    Math.max(...table.rows.map((row) => width(row[c] ?? ''))),
  );
  const row = (cells: readonly string[]) =>
    widths
      .map((w, c) => (cells[c] ?? '') + ' '.repeat(w - width(cells[c] ?? '')))
      .join(' | ')
      .trimEnd();
  const [head = [], ...body] = table.rows;
  return [row(head), widths.map((w) => '-'.repeat(w)).join('-+-'), ...body.map(row)].join('\n');
}

/** The parts being filled: blocks go in whole where they fit, else in as many pieces as needed. */
class Parts {
  readonly #parts: string[] = [];
  #current = '';

  constructor(
    readonly limit: number,
    readonly size: (text: string) => number,
  ) {}

  /**
   * Adds one block of `units` (lines), rendered together by `render`; a unit that fits no part
   * alone is replaced by the pieces `explode` cuts it into.
   */
  block<T>(units: readonly T[], render: (units: T[]) => string, explode: (unit: T) => T[]): void {
    let queue = [...units];
    const fits = (count: number) =>
      this.size(this.#with(render(queue.slice(0, count)))) <= this.limit;
    while (queue.length > 0) {
      const count = most(queue.length, fits);
      if (count > 0) {
        this.#current = this.#with(render(queue.slice(0, count)));
        queue = queue.slice(count);
        if (queue.length > 0) this.#flush();
      } else if (this.#current !== '') {
        this.#flush();
      } else {
        const unit = queue[0] as T;
        const pieces = explode(unit);
        if (pieces.length === 1 && !this.#fitsAlone(render(pieces))) {
          // Nothing smaller renders within a part: the unit's text is cut wherever it must be.
          for (const piece of hardCut(render([unit]), (p) => this.size(p) <= this.limit)) {
            this.#current = piece;
            this.#flush();
          }
          queue = queue.slice(1);
        } else {
          queue.splice(0, 1, ...pieces);
        }
      }
    }
  }

  #fitsAlone(text: string): boolean {
    return this.size(text) <= this.limit;
  }

  done(): string[] {
    this.#flush();
    return this.#parts;
  }

  #with(text: string): string {
    return this.#current === '' ? text : `${this.#current}\n\n${text}`;
  }

  #flush(): void {
    if (this.#current.trim() !== '') this.#parts.push(this.#current);
    this.#current = '';
  }
}

/**
 * A line too long for one part, cut between words into lines that each fit (`fits`); the lead
 * stays on the first. A word longer than a part is cut at grapheme boundaries.
 */
function splitLine(line: Line, fits: (line: Line) => boolean): Line[] {
  const holds = (run: Run) => fits({ ...line, lead: '', runs: [{ ...run, text: 'x' }] });
  let words: Run[] = roomy(line.runs, holds).flatMap((run) =>
    run.atom
      ? [run]
      : (run.text.match(/\S+\s*|\s+/g) ?? []).map((text) => ({ text, marks: run.marks })),
  );
  const pieces: Line[] = [];
  const make = (runs: Run[]): Line => ({
    ...line,
    lead: pieces.length === 0 ? line.lead : '',
    runs: trimRuns(runs),
  });
  while (words.length > 0) {
    const count = most(words.length, (n) => fits(make(words.slice(0, n))));
    if (count > 0) {
      pieces.push(make(words.slice(0, count)));
      words = words.slice(count);
    } else {
      const word = words[0] as Run;
      const cut = hardCut(word.text, (text) => fits(make([{ ...word, text }])));
      if (cut.length > 1) {
        words.splice(0, 1, ...cut.map((text) => ({ ...word, text })));
      } else {
        // One grapheme that fits no part even bare: the caller cuts its rendered text.
        pieces.push(make([word]));
        words = words.slice(1);
      }
    }
  }
  return pieces;
}

/**
 * Runs whose markup leaves no room for a single character (a link to a URL as long as a
 * part) as plain text: a link's label followed by its URL, which platforms show as a link.
 */
function roomy(runs: readonly Run[], holds: (run: Run) => boolean): Run[] {
  return runs.map((run, index) => {
    if (run.marks.length === 0 || holds(run)) return run;
    const next = runs[index + 1];
    const url = run.marks
      .filter((mark) => mark.kind === 'link' && !next?.marks.includes(mark))
      .map((mark) => ` ${(mark as { url: string }).url}`)
      .join('');
    return { text: run.text + url, marks: [] };
  });
}

/**
 * The largest `count` from 0 to `total` for which `fits(count)` holds, `fits` being true up to
 * some count and false after it: a few tries, doubling then halving.
 */
function most(total: number, fits: (count: number) => boolean): number {
  if (fits(total)) return total;
  let low = 0;
  let high = 1;
  while (high < total && fits(high)) {
    low = high;
    high *= 2;
  }
  high = Math.min(high, total) - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Runs without the spaces at their two ends: a cut never leaves `*bold *` behind. */
function trimRuns(runs: readonly Run[]): Run[] {
  const out = runs.map((run) => ({ ...run }));
  const first = out[0];
  const last = out.at(-1);
  if (first && !first.atom) first.text = first.text.trimStart();
  if (last && !last.atom) last.text = last.text.trimEnd();
  return out.filter((run) => run.text !== '');
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Graphemes a monospace font shows two columns wide: emoji and East Asian ideographs. */
const WIDE =
  /\p{Extended_Pictographic}|[\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFF00-\uFF60]/u;

/** `text` cut at grapheme boundaries into the longest pieces that `fits` (at least one each). */
export function hardCut(text: string, fits: (piece: string) => boolean): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest !== '') {
    const tail = rest;
    const longest = most(tail.length, (n) => fits(tail.slice(0, boundary(tail, n))));
    const cut = Math.max(boundary(tail, longest), firstGrapheme(tail));
    pieces.push(tail.slice(0, cut));
    rest = tail.slice(cut);
  }
  return pieces;
}

/**
 * The last grapheme boundary at or before `index`. Only the text around `index` is segmented:
 * segmenting a long text whole is slow, and a grapheme is never that long.
 */
function boundary(text: string, index: number): number {
  if (index >= text.length) return text.length;
  const from = Math.max(0, index - 32);
  let at = from;
  for (const { index: start } of segmenter.segment(text.slice(from, index + 32))) {
    if (from + start > index) break;
    at = from + start;
  }
  return at;
}

function firstGrapheme(text: string): number {
  const first = segmenter.segment(text.slice(0, 64))[Symbol.iterator]().next().value;
  return first?.segment.length ?? text.length;
}
