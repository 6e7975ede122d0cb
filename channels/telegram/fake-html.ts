/**
 * The fake Telegram's reading of `parse_mode: 'HTML'`, as the Bot API reads it: the tags it
 * supports (others are refused), `&lt;` `&gt;` `&amp;` `&quot;` and numeric entities, every
 * other `<`, `>` and `&` refused, tags closed in order. Gives the text the message shows and
 * its entities (UTF-16 offsets), or throws the 400 Telegram answers ("can't parse entities").
 *
 * @example
 * ```ts
 * parseTelegramHtml('<b>hi</b> &amp; bye'); // { text: 'hi & bye', entities: [{ type: 'bold', offset: 0, length: 2 }] }
 * ```
 */
import type { MessageEntity } from 'grammy/types';

/** What the Bot API answers a text whose markup it cannot read with. */
export class HtmlRefused extends Error {
  readonly code = 400;
  constructor(reason: string) {
    super(`Bad Request: can't parse entities: ${reason}`);
  }
  get description(): string {
    return this.message;
  }
}

const ENTITY: Record<string, MessageEntity['type']> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  'tg-emoji': 'custom_emoji',
};

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

interface Open {
  tag: string;
  offset: number;
  attributes: Record<string, string>;
}

/** Reads Telegram HTML; throws `HtmlRefused` as the Bot API would. */
export function parseTelegramHtml(html: string): { text: string; entities: MessageEntity[] } {
  const byteOffset = (at: number) => Buffer.byteLength(html.slice(0, at));
  let text = '';
  const open: Open[] = [];
  const entities: MessageEntity[] = [];
  for (let i = 0; i < html.length;) {
    const ch = html[i] as string;
    if (ch === '&') {
      const entity = /^&(#x[\da-f]+|#\d+|[a-z]+);/i.exec(html.slice(i));
      const name = entity?.[1]?.toLowerCase();
      if (entity === null || name === undefined) {
        throw new HtmlRefused(`Unsupported entity at byte offset ${byteOffset(i)}`);
      }
      const named = NAMED[name];
      if (named !== undefined) text += named;
      else if (name.startsWith('#x')) text += String.fromCodePoint(parseInt(name.slice(2), 16));
      else if (name.startsWith('#')) text += String.fromCodePoint(Number(name.slice(1)));
      else
        throw new HtmlRefused(
          `Unsupported HTML entity "&${name};" at byte offset ${byteOffset(i)}`,
        );
      i += entity[0].length;
      continue;
    }
    if (ch === '>') throw new HtmlRefused(`Unexpected ">" at byte offset ${byteOffset(i)}`);
    if (ch !== '<') {
      text += ch;
      i++;
      continue;
    }
    const end = /^<\/([a-z-]*)\s*>/i.exec(html.slice(i));
    if (end) {
      const tag = (end[1] ?? '').toLowerCase();
      const top = open.pop();
      if (top === undefined)
        throw new HtmlRefused(`Unexpected end tag at byte offset ${byteOffset(i)}`);
      if (top.tag !== tag) {
        throw new HtmlRefused(
          `Unmatched end tag at byte offset ${byteOffset(i)}, expected "</${top.tag}>", found "</${tag}>"`,
        );
      }
      close(top, text.length, entities, open);
      i += end[0].length;
      continue;
    }
    const start = /^<([a-z-]*)((?:\s+[a-z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*>/i.exec(
      html.slice(i),
    );
    const tag = start?.[1]?.toLowerCase() ?? /^<([^\s>]*)/.exec(html.slice(i))?.[1] ?? '';
    if (start === null || ENTITY[tag] === undefined) {
      throw new HtmlRefused(`Unsupported start tag "${tag}" at byte offset ${byteOffset(i)}`);
    }
    open.push({ tag, offset: text.length, attributes: attributes(start[2] ?? '') });
    i += start[0].length;
  }
  const unclosed = open.at(-1);
  if (unclosed !== undefined) {
    throw new HtmlRefused(`Can't find end tag corresponding to start tag "${unclosed.tag}"`);
  }
  return { text, entities: entities.sort((a, b) => a.offset - b.offset) };
}

function close(top: Open, end: number, entities: MessageEntity[], outer: readonly Open[]): void {
  const length = end - top.offset;
  if (length === 0) return;
  const { tag, offset, attributes: attrs } = top;
  const type = ENTITY[tag] as MessageEntity['type'];
  if (tag === 'a') {
    const url = attrs['href'];
    if (url === undefined || url === '') return;
    entities.push({ type: 'text_link', offset, length, url });
  } else if (tag === 'code' && outer.at(-1)?.tag === 'pre') {
    const language = /^language-(.+)$/.exec(attrs['class'] ?? '')?.[1];
    if (language !== undefined) outer.at(-1)!.attributes['language'] = language;
  } else if (tag === 'pre') {
    const language = attrs['language'];
    entities.push({ type: 'pre', offset, length, ...(language !== undefined && { language }) });
  } else if (type !== 'custom_emoji') {
    entities.push({ type, offset, length } as MessageEntity);
  }
}

function attributes(source: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of source.matchAll(
    /([a-z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/gi,
  )) {
    const value = match[2] ?? match[3] ?? match[4] ?? '';
    out[(match[1] as string).toLowerCase()] = value.replace(
      /&(lt|gt|amp|quot);/g,
      (_m, n: string) => NAMED[n] ?? '',
    );
  }
  return out;
}
