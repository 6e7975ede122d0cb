/**
 * The files of FakeDiscord: the attachment objects of a message a person posts with files (as
 * Discord's API v10 shapes them; a voice message carries `duration_secs` and `waveform` and
 * the message the IS_VOICE_MESSAGE flag) and the CDN that serves them,
 * `/attachments/<channel>/<attachment>/<name>`, with no token, as Discord's CDN does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FakeFiles, type FakeFile } from '../../testing/fake-files.js';

/**
 * A file a person posts on Discord; `voice: true` makes it a voice message.
 *
 * @example
 * ```ts
 * discord.userMessage({ channelId, author, content: 'receipt', files: [{ name: 'r.png', mimeType: 'image/png' }] });
 * ```
 */
export interface FakeDiscordFile extends FakeFile {
  voice?: boolean;
}

/** Discord's message flag for a voice message. */
export const IS_VOICE_MESSAGE = 1 << 13;

/**
 * The file registry of one FakeDiscord.
 *
 * @example
 * ```ts
 * const attachments = files.attach(channelId, [{ name: 'r.png' }], nextId);
 * ```
 */
export class FakeDiscordFiles {
  readonly held = new FakeFiles();

  constructor(private readonly base: () => string) {}

  /** The `attachments` of a message posted in `channelId` with these files. */
  attach(
    channelId: string,
    files: readonly FakeDiscordFile[],
    nextId: () => string,
  ): Record<string, unknown>[] {
    return files.map((file) => {
      const id = nextId();
      const held = this.held.put(id, file);
      const name = file.name ?? (file.voice === true ? 'voice-message.ogg' : 'unknown');
      const path = `/attachments/${channelId}/${id}/${encodeURIComponent(name)}`;
      const signature = '?ex=6790c4f1&is=678f7371&hm=0f2a';
      return {
        id,
        filename: name,
        size: held.size,
        url: `${this.base()}${path}${signature}`,
        proxy_url: `${this.base()}${path}${signature}`,
        ...(held.mimeType !== undefined && { content_type: held.mimeType }),
        ...(file.voice === true && { duration_secs: 3.2, waveform: 'AAAAAAAAAAAA' }),
      };
    });
  }

  /** Serves `GET /attachments/<channel>/<attachment>/<name>`; false for any other path. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const match = /^\/attachments\/\d+\/(\d+)\//.exec(path);
    if (req.method !== 'GET' || match === null) return false;
    this.held.serve(match[1], res);
    return true;
  }
}
