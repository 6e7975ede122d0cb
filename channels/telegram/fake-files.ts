/**
 * The files of FakeTelegram: the media fields of a message a person sends with a file (as the
 * Bot API shapes them: `photo` sizes, `document`, `voice`, …), `getFile`, and the download URL
 * `/file/bot<token>/<file_path>`. Telegram's own limit holds: `getFile` refuses a file over
 * 20 MB.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Message } from 'grammy/types';
import { FakeFiles, type FakeFile } from '../testing/fake-files.js';

/** The kinds of file a Telegram message can carry. */
export type FakeTelegramMediaKind =
  'photo' | 'document' | 'voice' | 'video' | 'video_note' | 'audio' | 'animation' | 'sticker';

/**
 * A file sent with a message: the message's `text` becomes its caption.
 *
 * @example
 * ```ts
 * telegram.sendUserMessage({ chat, from: ada, text: 'my receipt', file: { kind: 'photo', content: jpeg } });
 * ```
 */
export interface FakeTelegramMedia extends FakeFile {
  kind: FakeTelegramMediaKind;
}

/** What `getFile` serves at most (the Bot API's download limit). */
const GET_FILE_LIMIT = 20 * 1024 * 1024;

const DEFAULT_MIME: Partial<Record<FakeTelegramMediaKind, string>> = {
  photo: 'image/jpeg',
  voice: 'audio/ogg',
  video_note: 'video/mp4',
  animation: 'video/mp4',
  sticker: 'image/webp',
};

/**
 * The file registry of one FakeTelegram.
 *
 * @example
 * ```ts
 * const fields = files.media({ kind: 'voice', content: ogg }); // { voice: { file_id, … } }
 * ```
 */
export class FakeTelegramFiles {
  readonly held = new FakeFiles();
  #next = 1;
  readonly #paths = new Map<string, string>();

  /** The message fields for a file sent with a message. */
  media(media: FakeTelegramMedia): Partial<Message> {
    const n = this.#next++;
    const fileId = `${media.kind.toUpperCase()}AgACAgIAAxkBAAI${n}`;
    const mimeType = media.mimeType ?? DEFAULT_MIME[media.kind];
    const held = this.held.put(fileId, { ...media, ...(mimeType !== undefined && { mimeType }) });
    const extension = held.name?.split('.').pop() ?? mimeType?.split('/')[1] ?? 'bin';
    this.#paths.set(`${media.kind}s/file_${n}.${extension}`, fileId);
    const file = {
      file_id: fileId,
      file_unique_id: `AQAD${n}`,
      file_size: held.size,
    };
    const named = {
      ...file,
      ...(held.name !== undefined && { file_name: held.name }),
      ...(mimeType !== undefined && { mime_type: mimeType }),
    };
    switch (media.kind) {
      case 'photo':
        return {
          photo: [
            { ...file, file_id: `${fileId}s`, file_size: 1024, width: 90, height: 67 },
            { ...file, width: 1280, height: 960 },
          ],
        };
      case 'voice':
        return { voice: { ...named, duration: 3 } } as Partial<Message>;
      case 'video_note':
        return { video_note: { ...file, length: 240, duration: 5 } };
      case 'video':
        return { video: { ...named, width: 640, height: 360, duration: 5 } };
      case 'audio':
        return { audio: { ...named, duration: 180 } };
      case 'animation':
        // Telegram sends an animation as a document too, for older clients.
        return {
          animation: { ...named, width: 320, height: 240, duration: 2 },
          document: named,
        } as Partial<Message>;
      case 'sticker':
        return {
          sticker: {
            ...file,
            type: 'regular',
            width: 512,
            height: 512,
            is_animated: false,
            is_video: false,
            emoji: media.name ?? '👍',
          },
        };
      case 'document':
        return { document: named };
    }
  }

  /** The `getFile` answer: a `File` with its `file_path`, or a Bot API failure. */
  getFile(payload: Record<string, unknown>): { file_id: string; file_path: string } {
    const id = payload.file_id;
    const held = typeof id === 'string' ? this.held.get(id.replace(/s$/, '')) : undefined;
    if (typeof id !== 'string' || held === undefined) {
      throw { code: 400, description: 'Bad Request: invalid file_id' };
    }
    if (held.size > GET_FILE_LIMIT)
      throw { code: 400, description: 'Bad Request: file is too big' };
    const path = [...this.#paths].find(([, fileId]) => fileId === held.id)?.[0];
    return {
      file_id: id,
      file_unique_id: `AQAD${held.id}`,
      file_size: held.size,
      file_path: path ?? `documents/${held.id}`,
    } as { file_id: string; file_path: string };
  }

  /** Serves `/file/bot<token>/<file_path>`; false for any other path. */
  serve(req: IncomingMessage, res: ServerResponse, token: string): boolean {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const prefix = `/file/bot${token}/`;
    if (!path.startsWith('/file/')) return false;
    const fileId = path.startsWith(prefix) ? this.#paths.get(path.slice(prefix.length)) : undefined;
    this.held.serve(fileId, res);
    return true;
  }
}

/** A file part of a multipart request, as the fake read it. */
export interface FakeFormFile {
  name: string;
  type: string;
  bytes: Buffer;
}

/** True for a file part of a multipart request. */
export function isFormFile(value: unknown): value is FakeFormFile {
  return (
    typeof value === 'object' && value !== null && Buffer.isBuffer((value as FakeFormFile).bytes)
  );
}

/** A file the bot uploaded with `sendPhoto` or `sendDocument`. */
export interface FakeTelegramUpload {
  method: 'sendPhoto' | 'sendDocument';
  chatId: number;
  /** The file name of the upload's part. */
  name: string;
  bytes: Buffer;
  caption?: string;
  /** The Message the fake answered with. */
  message: Message;
}

/** The Bot API's upload limit (a bigger request is refused with 413). */
export const UPLOAD_LIMIT = 50 * 1024 * 1024;

const TYPES_BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  zip: 'application/zip',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/**
 * The media fields of a message the bot sent with an uploaded file, as Telegram answers them:
 * a photo gets its sizes (no name, no type), a document its name and the type its name says.
 * Refuses what the Bot API refuses: no file part (400) or one over 50 MB (413).
 */
export function uploadedMedia(
  files: FakeTelegramFiles,
  kind: 'photo' | 'document',
  upload: unknown,
): Partial<Message> {
  if (!isFormFile(upload)) {
    throw { code: 400, description: `Bad Request: there is no ${kind} in the request` };
  }
  if (upload.bytes.length > UPLOAD_LIMIT) {
    throw { code: 413, description: 'Request Entity Too Large' };
  }
  const extension = upload.name.split('.').pop()?.toLowerCase() ?? '';
  const mimeType = TYPES_BY_EXTENSION[extension] ?? 'application/octet-stream';
  return files.media({
    kind,
    ...(kind === 'document' && { name: upload.name }),
    mimeType,
    content: upload.bytes,
  });
}
