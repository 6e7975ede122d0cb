import type { ServerResponse } from 'node:http';

/**
 * A file a person shares through a fake platform: what the platform says of it, and the bytes
 * the fake serves when the bot fetches it.
 *
 * @example
 * ```ts
 * const invoice: FakeFile = { name: 'invoice.pdf', mimeType: 'application/pdf', content: '%PDF-1.7 …' };
 * const huge: FakeFile = { name: 'backup.tar', size: 5_000_000_000 }; // reported, never served
 * ```
 */
export interface FakeFile {
  /** The file name (Telegram photos and voice notes have none). */
  name?: string;
  /** Its MIME type, as the platform reports it (any string: an unknown type is kept). */
  mimeType?: string;
  /** The bytes the fake serves (default: the name's bytes, or a few bytes). */
  content?: string | Uint8Array;
  /** The size the platform reports (default: the content's length): a huge file, not served. */
  size?: number;
  /** The platform refuses to serve it (a 403 / 404 where the bot fetches it). */
  refused?: boolean;
}

/** A file a fake holds, by the platform id it gave it. */
export interface HeldFile {
  id: string;
  name: string | undefined;
  mimeType: string | undefined;
  size: number;
  bytes: Buffer;
  refused: boolean;
}

/**
 * The files a fake platform was given, by id, and how it serves them: the bytes, or 404 for
 * one it refuses (or one bigger than what it holds).
 *
 * @example
 * ```ts
 * const held = files.put('F1', { name: 'a.txt', content: 'hello' });
 * files.serve('F1', res); // 200, 'hello'
 * ```
 */
export class FakeFiles {
  readonly #files = new Map<string, HeldFile>();
  /** How many times each file was fetched, by id. */
  readonly fetched = new Map<string, number>();

  put(id: string, file: FakeFile): HeldFile {
    const content = file.content ?? file.name ?? 'fake file';
    const bytes = Buffer.from(content);
    const held: HeldFile = {
      id,
      name: file.name,
      mimeType: file.mimeType,
      size: file.size ?? bytes.length,
      bytes,
      refused: file.refused === true,
    };
    this.#files.set(id, held);
    return held;
  }

  get(id: string): HeldFile | undefined {
    return this.#files.get(id);
  }

  /** Answers a fetch of file `id` with its bytes, or `status` when it is unknown or refused. */
  serve(id: string | undefined, res: ServerResponse, status = 404): void {
    const held = id === undefined ? undefined : this.#files.get(id);
    if (held !== undefined) this.fetched.set(held.id, (this.fetched.get(held.id) ?? 0) + 1);
    if (held === undefined || held.refused || held.size > held.bytes.length) {
      res.writeHead(status, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    res
      .writeHead(200, {
        'content-type': held.mimeType ?? 'application/octet-stream',
        'content-length': String(held.bytes.length),
      })
      .end(held.bytes);
  }
}
