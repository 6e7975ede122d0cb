import type { FilePart, ImagePart, ModelMessage, TextPart } from 'ai';
import { attachmentPlaceholder } from '../attachments.js';
import type { FetchAttachment, FetchedAttachment, MessageAttachment } from '../attachments.js';
import { AttachmentTooLargeError, ColloquyError, messageOf } from '../errors.js';
import type { StoredMessage } from '../types.js';
import type { FittedUnit } from './budget.js';

/**
 * Files in the prompt: the images and text files of the people's turns an assembled prompt
 * holds go to the model as AI SDK message parts, fetched through the channel they came from.
 * Every file keeps its placeholder in the turn's text (`[image: box.jpg, 240 KB]`, counted in
 * the token budget): it names the file, and stands alone for one that is not given (another
 * kind, too large, over the count, refused by the platform, not what its type says).
 */

/** What a file can go to the model as: an image, inlined text, or a PDF file part. */
export type AttachmentPartKind = 'image' | 'text' | 'pdf';

/**
 * Which files an agent's prompt carries, and how large they may be (see `BaseAgent.attachments`).
 *
 * @example
 * ```ts
 * const options: AttachmentOptions = { maxCount: 2, kinds: ['image'] };
 * ```
 */
export interface AttachmentOptions {
  /** Largest image or PDF given, in bytes (default 1 MiB). */
  maxBytes?: number;
  /** Largest text file inlined, in bytes (default 8 KiB, about 2 000 tokens). */
  maxTextBytes?: number;
  /** Most files in one prompt: the current turn's first, then the newest turns' (default 4). */
  maxCount?: number;
  /** What is given (default `['image', 'text']`; `pdf` for a model that reads PDFs). */
  kinds?: readonly AttachmentPartKind[];
  /** How long one file's fetch may take, in ms (default 10 000). */
  timeoutMs?: number;
}

/**
 * The defaults of `AttachmentOptions`: a prompt carries at most four files of at most 1 MiB.
 *
 * @example
 * ```ts
 * DEFAULT_ATTACHMENT_OPTIONS.maxCount; // 4
 * ```
 */
export const DEFAULT_ATTACHMENT_OPTIONS: Readonly<Required<AttachmentOptions>> = {
  maxBytes: 1024 * 1024,
  maxTextBytes: 8 * 1024,
  maxCount: 4,
  kinds: ['image', 'text'],
  timeoutMs: 10_000,
};

/** What assembly needs to give files: the limits, the channel's fetch, the run's signal. */
export interface PromptAttachments extends AttachmentOptions {
  fetch: FetchAttachment;
  signal?: AbortSignal;
}

/** The image types models take, by their first bytes. */
const IMAGE_SIGNATURES: { mediaType: string; matches(bytes: Uint8Array): boolean }[] = [
  { mediaType: 'image/png', matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47]) },
  { mediaType: 'image/jpeg', matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { mediaType: 'image/gif', matches: (b) => startsWith(b, [0x47, 0x49, 0x46, 0x38]) },
  {
    mediaType: 'image/webp',
    matches: (b) => startsWith(b, [0x52, 0x49, 0x46, 0x46]) && ascii(b, 8, 12) === 'WEBP',
  },
];

/** Text types besides `text/*`. */
const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/csv',
  'application/x-ndjson',
  'application/javascript',
  'application/sql',
]);

/**
 * How a file can go to the model, by its MIME type; `undefined` for a type no model takes
 * (audio, video, archives, an unknown type).
 *
 * @example
 * ```ts
 * partKindOf({ kind: 'image', mimeType: 'image/png' }); // 'image'
 * partKindOf({ kind: 'file', mimeType: 'application/x-made-up' }); // undefined
 * ```
 */
export function partKindOf(file: MessageAttachment): AttachmentPartKind | undefined {
  const type = file.mimeType?.split(';')[0]?.trim().toLowerCase();
  if (type === undefined) return undefined;
  if (IMAGE_SIGNATURES.some((signature) => signature.mediaType === type)) return 'image';
  if (type === 'application/pdf') return 'pdf';
  // A sticker's text is its animation (Discord's Lottie JSON): never inlined.
  if (file.kind === 'sticker') return undefined;
  if (type.startsWith('text/') || TEXT_TYPES.has(type) || /\+(json|xml)$/.test(type)) {
    return 'text';
  }
  return undefined;
}

/** One file chosen for the prompt: where it is and how it goes. */
interface Chosen {
  fitted: number;
  turn: StoredMessage;
  file: MessageAttachment;
  kind: AttachmentPartKind;
}

/**
 * The fitted units (the current turn last) with the files chosen among them given as parts.
 * Never throws: a file that cannot be fetched or read keeps its placeholder alone, and a
 * failure other than "too large" goes to `report`.
 */
export async function withAttachments(
  fitted: readonly FittedUnit[],
  given: PromptAttachments,
  report: (error: ColloquyError) => void,
): Promise<FittedUnit[]> {
  const d = DEFAULT_ATTACHMENT_OPTIONS;
  const o: Required<AttachmentOptions> = {
    maxBytes: given.maxBytes ?? d.maxBytes,
    maxTextBytes: given.maxTextBytes ?? d.maxTextBytes,
    maxCount: given.maxCount ?? d.maxCount,
    kinds: given.kinds ?? d.kinds,
    timeoutMs: given.timeoutMs ?? d.timeoutMs,
  };
  const chosen = choose(fitted, o);
  if (chosen.length === 0) return [...fitted];
  const fetched = new Map<string, Promise<FetchedAttachment>>();
  const parts = await Promise.all(
    chosen.map(async (pick, i) => {
      // The same file shared twice is fetched once; a file with neither id nor URL on its own.
      const key = pick.file.platformFileId ?? pick.file.url ?? `#${i}`;
      const maxBytes = pick.kind === 'text' ? o.maxTextBytes : o.maxBytes;
      let fetching = fetched.get(key);
      if (fetching === undefined) {
        fetching = given.fetch(pick.file, {
          maxBytes,
          timeoutMs: o.timeoutMs,
          ...(given.signal !== undefined && { signal: given.signal }),
        });
        fetched.set(key, fetching);
      }
      try {
        return partsOf(pick, await fetching);
      } catch (error) {
        if (given.signal?.aborted === true) throw error;
        if (error instanceof AttachmentTooLargeError) return [];
        report(asColloquyError(error, pick));
        return [];
      }
    }),
  );
  const out = [...fitted];
  chosen.forEach((pick, i) => {
    const extra = parts[i] ?? [];
    const unit = out[pick.fitted];
    const [message] = unit?.messages ?? [];
    if (extra.length === 0 || unit === undefined || message?.role !== 'user') return;
    const content =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content } as TextPart]
        : message.content;
    out[pick.fitted] = { ...unit, messages: [{ role: 'user', content: [...content, ...extra] }] };
  });
  return out;
}

/** Which files go in: people's turns only, newest turn first, within kinds, sizes and count. */
function choose(fitted: readonly FittedUnit[], o: Required<AttachmentOptions>): Chosen[] {
  const chosen: Chosen[] = [];
  for (let i = fitted.length - 1; i >= 0 && chosen.length < o.maxCount; i--) {
    const { unit } = fitted[i] as FittedUnit;
    if (unit.kind !== 'text' || unit.role !== 'user') continue;
    for (const file of unit.turn.attachments ?? []) {
      const kind = partKindOf(file);
      if (kind === undefined || !o.kinds.includes(kind)) continue;
      const maxBytes = kind === 'text' ? o.maxTextBytes : o.maxBytes;
      if (file.size !== undefined && file.size > maxBytes) continue;
      if (chosen.length < o.maxCount) chosen.push({ fitted: i, turn: unit.turn, file, kind });
    }
  }
  // In the order the files appear in, so the parts follow their placeholders.
  return chosen.sort((a, b) => a.fitted - b.fitted);
}

/** The parts a fetched file becomes; none when its bytes are not what its type says. */
function partsOf(pick: Chosen, fetched: FetchedAttachment): (ImagePart | FilePart | TextPart)[] {
  const { bytes } = fetched;
  if (pick.kind === 'image') {
    const signature = IMAGE_SIGNATURES.find((candidate) => candidate.matches(bytes));
    return signature === undefined
      ? []
      : [{ type: 'image', image: bytes, mediaType: signature.mediaType }];
  }
  if (pick.kind === 'pdf') {
    if (ascii(bytes, 0, 5) !== '%PDF-') return [];
    const name = pick.file.name;
    return [
      {
        type: 'file',
        data: bytes,
        mediaType: 'application/pdf',
        ...(name !== undefined && { filename: name }),
      },
    ];
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return [];
  }
  return [{ type: 'text', text: inlined(attachmentPlaceholder(pick.file), text) }];
}

/**
 * A text file as the prompt carries it: its placeholder, then its text in a fenced block whose
 * fence is longer than any run of backticks in the text, so the file's content cannot end the
 * block and read as the person's words.
 */
function inlined(placeholder: string, text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map(([run]) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${placeholder}\n${fence}\n${text}\n${fence}`;
}

function asColloquyError(error: unknown, { file, turn }: Chosen): ColloquyError {
  if (error instanceof ColloquyError) return error;
  return new ColloquyError(`could not fetch ${attachmentPlaceholder(file)}: ${messageOf(error)}`, {
    cause: error,
    conversationId: turn.conversationId,
    messageId: turn.id,
  });
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}

/** The prompt without its files: each person's turn back to its text, placeholders and all. */
export function withoutAttachments(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => {
    if (message.role !== 'user' || typeof message.content === 'string') return message;
    const [first] = message.content;
    return first?.type === 'text' ? { role: 'user', content: first.text } : message;
  });
}
