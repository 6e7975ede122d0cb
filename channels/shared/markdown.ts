/**
 * The Markdown models write, read into blocks and styled runs that each platform's formatter
 * renders in its own dialect (`channels/<platform>/format.ts`). It reads what answers hold —
 * headings, lists, quotes, emphasis (nested), strikethrough, code spans and fenced blocks,
 * links, tables — and leaves everything else as text. Unclosed markers stay literal, so a
 * streamed prefix reads as well as the whole answer.
 *
 * @example
 * ```ts
 * parseMarkdown('**Hi** _there_\n\n```ts\nlet x = 1;\n```');
 * // [{ kind: 'lines', lines: [...] }, { kind: 'code', lang: 'ts', code: 'let x = 1;', closed: true }]
 * ```
 */

/** A style over a run of text; links carry their target. */
export type Mark =
  | { kind: 'bold' }
  | { kind: 'italic' }
  | { kind: 'strike' }
  | { kind: 'code' }
  | { kind: 'link'; url: string };

/**
 * Text with the marks over it, outermost first. Runs of one span share the same mark objects,
 * which is how a renderer tells one `<b>` apart from two adjacent ones. An `atom` (a platform
 * token such as `<@U123>`) is never cut.
 */
export interface Run {
  text: string;
  marks: readonly Mark[];
  atom?: boolean;
}

/** One line of prose: its list marker or heading or quote, then its runs. */
export interface Line {
  /** Indentation plus `•` or `1.` for a list item; empty otherwise. */
  lead: string;
  /** 1 to 6 for a heading (its runs are bold), 0 otherwise. */
  heading: number;
  quote: boolean;
  runs: Run[];
}

/** A stretch the formatters keep together when they can: prose, a code block or a table. */
export type Block =
  | { kind: 'lines'; lines: Line[] }
  | { kind: 'code'; lang: string; code: string; closed: boolean }
  | { kind: 'table'; rows: string[][] };

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`\n]*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)+\|?\s*$/;

/** The blocks of `markdown`, in order: blank lines end prose, fences and tables stand alone. */
export function parseMarkdown(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let prose: Line[] = [];
  const endProse = () => {
    if (prose.length > 0) blocks.push({ kind: 'lines', lines: prose });
    prose = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const fence = FENCE.exec(line);
    if (fence) {
      endProse();
      const marker = fence[1] as string;
      const body: string[] = [];
      let closed = false;
      for (i++; i < lines.length; i++) {
        const next = lines[i] as string;
        if (next.trim().startsWith(marker[0]!.repeat(marker.length)) && /^[`~\s]+$/.test(next)) {
          closed = true;
          break;
        }
        body.push(next);
      }
      blocks.push({ kind: 'code', lang: fence[2] ?? '', code: body.join('\n'), closed });
      continue;
    }
    if (line.includes('|') && TABLE_RULE.test(lines[i + 1] ?? '')) {
      endProse();
      const rows = [cells(line)];
      for (i += 2; i < lines.length && (lines[i] as string).includes('|'); i++) {
        rows.push(cells(lines[i] as string));
      }
      i--;
      blocks.push({ kind: 'table', rows });
      continue;
    }
    if (line.trim() === '') endProse();
    else prose.push(parseLine(line));
  }
  endProse();
  return blocks;
}

/** A table row's cells, as plain text: inline markers dropped, a link's target after it. */
function cells(row: string): string[] {
  const inner = row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((cell) => {
    const runs = parseInline(cell.trim().replace(/\\\|/g, '|'));
    return runs
      .map((run, i) => {
        const link = run.marks.find((mark) => mark.kind === 'link');
        const ends = link !== undefined && !runs[i + 1]?.marks.includes(link);
        return ends && link.url !== run.text ? `${run.text} (${link.url})` : run.text;
      })
      .join('');
  });
}

function parseLine(source: string): Line {
  const heading = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(source);
  if (heading) {
    const runs = parseInline(heading[2]!, [{ kind: 'bold' }]);
    return { lead: '', heading: heading[1]!.length, quote: false, runs };
  }
  if (/^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/.test(source)) {
    return { lead: '', heading: 0, quote: false, runs: [{ text: '———', marks: [] }] };
  }
  const quote = /^ {0,3}>[ \t]?(.*)$/.exec(source);
  const text = quote ? quote[1]! : source;
  const item = /^(\s*)(?:([-*+])|(\d{1,9}[.)]))[ \t]+(.*)$/.exec(text);
  if (item) {
    const indent = ' '.repeat(Math.min(item[1]!.replace(/\t/g, '  ').length, 12));
    const marker = item[2] === undefined ? item[3]! : '•';
    return { lead: `${indent}${marker} `, heading: 0, quote: !!quote, runs: parseInline(item[4]!) };
  }
  return { lead: '', heading: 0, quote: !!quote, runs: parseInline(text) };
}

/** A bare web address: kept whole, as the platforms link it themselves. */
const URL_AT = /^https?:\/\/[^\s<>]*[^\s<>.,;:!?'")\]*_~]/;

const EMPHASIS: Record<string, Mark['kind']> = {
  '**': 'bold',
  __: 'bold',
  '*': 'italic',
  _: 'italic',
  '~~': 'strike',
};

/** Inline Markdown as runs. */
export function parseInline(text: string, marks: readonly Mark[] = []): Run[] {
  const runs: Run[] = [];
  const push = (t: string, atom = false) => {
    if (t === '') return;
    const last = runs.at(-1);
    if (!atom && last && !last.atom && last.marks === marks) last.text += t;
    else runs.push(atom ? { text: t, marks, atom } : { text: t, marks });
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const ch = text[i] as string;
    if (ch === '\\' && /^\\[\\`*_~[\]()<>#|!-]/.test(rest)) {
      push(rest[1]!);
      i += 2;
      continue;
    }
    if (ch === '`') {
      const ticks = /^`+/.exec(rest)![0];
      const end = text.indexOf(ticks, i + ticks.length);
      if (end > 0 && text[end + ticks.length] !== '`') {
        const code = text.slice(i + ticks.length, end);
        const inner = /^ .* $/.test(code) && code.trim() !== '' ? code.slice(1, -1) : code;
        runs.push({ text: inner, marks: [...marks, { kind: 'code' }] });
        i = end + ticks.length;
        continue;
      }
      push(ticks);
      i += ticks.length;
      continue;
    }
    if (ch === '<') {
      const token = /^<(?:[@#!][^<>\s|][^<>\n]*|(?:https?|mailto):[^<>\s|]+(?:\|[^<>\n]+)?)>/.exec(
        rest,
      );
      if (token) {
        const inner = token[0].slice(1, -1);
        if (/^[@#!]/.test(inner)) push(token[0], true);
        else {
          const [url, label] = inner.split('|') as [string, string | undefined];
          runs.push(...parseInline(label ?? url, [...marks, { kind: 'link', url }]));
        }
        i += token[0].length;
        continue;
      }
    }
    if (ch === '[') {
      const link = linkAt(text, i);
      if (link) {
        runs.push(...parseInline(link.label, [...marks, { kind: 'link', url: link.url }]));
        i = link.end;
        continue;
      }
    }
    const url = URL_AT.exec(rest)?.[0];
    if (url !== undefined && !/[\p{L}\p{N}]/u.test(text[i - 1] ?? '')) {
      push(url, true);
      i += url.length;
      continue;
    }
    const delim = /^(\*\*\*|\*\*|__|\*|_|~~)/.exec(rest)?.[1];
    if (delim !== undefined) {
      const span = emphasisAt(text, i, delim);
      if (span) {
        const inner =
          delim === '***'
            ? parseInline(span.inner, [...marks, { kind: 'bold' }, { kind: 'italic' }])
            : parseInline(span.inner, [...marks, { kind: EMPHASIS[delim] } as Mark]);
        runs.push(...inner);
        i = span.end;
        continue;
      }
      push(delim);
      i += delim.length;
      continue;
    }
    const plain = /^[^\\`<[*_~h]+/.exec(rest)?.[0] ?? ch;
    push(plain);
    i += plain.length;
  }
  return runs;
}

/** `[label](url)` at `at`, with a web or mail target; `undefined` when it is not one. */
function linkAt(text: string, at: number): { label: string; url: string; end: number } | undefined {
  let depth = 0;
  let close = -1;
  for (let j = at; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '[') depth++;
    else if (text[j] === ']' && --depth === 0) {
      close = j;
      break;
    }
  }
  if (close < 0) return undefined;
  const target =
    /^\(\s*<?((?:https?:\/\/|mailto:|tg:\/\/)[^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(
      text.slice(close + 1),
    );
  if (!target) return undefined;
  return { label: text.slice(at + 1, close), url: target[1]!, end: close + 1 + target[0].length };
}

/**
 * The emphasis opened by `delim` at `at` and where it ends, by CommonMark's flanking rules as
 * far as answers need them: the opener is followed by a non-space, the closer preceded by one,
 * and `_` never opens or closes inside a word (`snake_case` stays as written).
 */
function emphasisAt(
  text: string,
  at: number,
  delim: string,
): { inner: string; end: number } | undefined {
  const after = text[at + delim.length];
  if (after === undefined || /\s/.test(after)) return undefined;
  const underscore = delim[0] === '_';
  if (underscore && /[\p{L}\p{N}]/u.test(text[at - 1] ?? '')) return undefined;
  for (let j = at + delim.length + 1; j <= text.length - delim.length; j++) {
    if (text[j] === '\\') {
      j++;
      continue;
    }
    if (text[j] === '`') {
      const ticks = /^`+/.exec(text.slice(j))![0];
      const end = text.indexOf(ticks, j + ticks.length);
      if (end > 0) j = end + ticks.length - 1;
      continue;
    }
    const url = URL_AT.exec(text.slice(j, j + 2048))?.[0];
    if (url !== undefined) {
      j += url.length - 1;
      continue;
    }
    if (!text.startsWith(delim, j) || /\s/.test(text[j - 1]!)) continue;
    const next = text[j + delim.length];
    // `**a**` closes `*` only where a lone `*` stands: skip a longer run of the same marker.
    if (delim.length === 1 && next === delim) {
      j++;
      continue;
    }
    if (underscore && /[\p{L}\p{N}]/u.test(next ?? '')) continue;
    // In `***`, `**` closes at the end of the run: the star before it closes an inner `*`.
    let close = j;
    while (text[close + delim.length] === delim[0]) close++;
    return { inner: text.slice(at + delim.length, close), end: close + delim.length };
  }
  return undefined;
}
