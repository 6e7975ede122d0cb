/**
 * HTML built by a tagged template that escapes every interpolated value. Chat content is
 * hostile input: the only way text reaches a page unescaped is as an `Html` made by `h` (or
 * `trusted` for constants written in this folder).
 *
 * @example
 * ```ts
 * h`<p title="${name}">${text}</p>`.value; // name and text escaped
 * ```
 */
export class Html {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** What `h` accepts: markup, text to escape, numbers, nothing, or lists of those. */
export type Child = Html | string | number | boolean | null | undefined | readonly Child[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for HTML content and double- or single-quoted attribute values.
 *
 * @example
 * ```ts
 * escapeHtml('<img src=x onerror=alert(1)>'); // '&lt;img src=x onerror=alert(1)&gt;'
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

function append(out: string[], child: Child): void {
  if (child === null || child === undefined || child === false || child === true) return;
  if (child instanceof Html) out.push(child.value);
  else if (typeof child === 'number') out.push(String(child));
  else if (typeof child === 'string') out.push(escapeHtml(child));
  else for (const item of child) append(out, item);
}

/** The tagged template: literal parts as written, every value escaped (or kept, if `Html`). */
export function h(strings: TemplateStringsArray, ...values: Child[]): Html {
  const out: string[] = [];
  strings.forEach((part, i) => {
    out.push(part);
    if (i < values.length) append(out, values[i]);
  });
  return new Html(out.join(''));
}

/** Markup written in this folder (never data). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/**
 * Builds a local URL: path segments and query values are percent-encoded, empty values left
 * out. Links never carry a scheme taken from data.
 *
 * @example
 * ```ts
 * href(['c', 'slack:T1:C1'], { before: '2026-03-01|12' }); // '/c/slack%3AT1%3AC1?before=…'
 * ```
 */
export function href(
  segments: readonly string[],
  query: Record<string, string | number | undefined> = {},
  hash?: string,
): string {
  const path = `/${segments.map(encodeURIComponent).join('/')}`;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(key, String(value));
  }
  const search = params.toString();
  return `${path}${search === '' ? '' : `?${search}`}${hash === undefined ? '' : `#${hash}`}`;
}
