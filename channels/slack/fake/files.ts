/**
 * The files of FakeSlack: the file objects of a `file_share` message (as Slack's Events API
 * shapes them) and `url_private`, which serves the bytes to a request with the bot token only
 * (without it, Slack redirects to its sign-in page).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FakeFiles, type FakeFile } from '../../testing/fake-files.js';

/**
 * A file a person shares on Slack; `clip: 'audio'` or `'video'` makes it a clip recorded in
 * the app (`subtype` `slack_audio` / `slack_video`).
 *
 * @example
 * ```ts
 * await slack.fileShare({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'see attached',
 *   files: [{ name: 'invoice.pdf', mimeType: 'application/pdf', content: '%PDF-1.7' }] });
 * ```
 */
export interface FakeSlackFile extends FakeFile {
  clip?: 'audio' | 'video';
}

/**
 * The file registry of one FakeSlack.
 *
 * @example
 * ```ts
 * const objects = files.share([{ name: 'a.png', mimeType: 'image/png' }], 'U0ALICE');
 * ```
 */
export class FakeSlackFiles {
  readonly held = new FakeFiles();
  #next = 1;

  constructor(
    private readonly base: () => string,
    private readonly teamId: string,
  ) {}

  /** The `files` of a message event sharing these files. */
  share(files: readonly FakeSlackFile[], user: string): Record<string, unknown>[] {
    return files.map((file) => {
      const id = `F0FAKE${String(this.#next++).padStart(5, '0')}`;
      const held = this.held.put(id, file);
      const name = file.name ?? `${id}.bin`;
      const path = `/files-pri/${this.teamId}-${id}/${encodeURIComponent(name)}`;
      const now = Math.floor(Date.now() / 1000);
      return {
        id,
        created: now,
        timestamp: now,
        name,
        title: name,
        mimetype: file.mimeType ?? '',
        filetype: name.includes('.') ? name.split('.').pop() : 'binary',
        user,
        ...(file.clip !== undefined && { subtype: `slack_${file.clip}` }),
        editable: false,
        size: held.size,
        mode: 'hosted',
        is_external: false,
        is_public: true,
        url_private: `${this.base()}${path}`,
        url_private_download: `${this.base()}${path.replace(/\/([^/]+)$/, '/download/$1')}`,
        permalink: `https://fake.slack.com/files/${user}/${id}/${encodeURIComponent(name)}`,
      };
    });
  }

  /** Serves `GET /files-pri/<team>-<file id>/…` to the bot token; false for any other path. */
  serve(req: IncomingMessage, res: ServerResponse, token: string): boolean {
    const match = /^\/files-pri\/[^/-]+-([^/]+)\//.exec(req.url ?? '');
    if (req.method !== 'GET' || match === null) return false;
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(302, { location: `${this.base()}/signin` }).end();
      return true;
    }
    this.held.serve(match[1], res);
    return true;
  }
}
