/**
 * The files of FakeSlack: the file objects of a `file_share` message (as Slack's Events API
 * shapes them) and `url_private`, which serves the bytes to a request with the bot token only
 * (without it, Slack redirects to its sign-in page).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FakeFiles, type FakeFile } from '../../testing/fake-files.js';
import { readMultipart } from '../../testing/multipart.js';

/** A file the bot uploaded (`files.uploadV2`) and shared with `files.completeUploadExternal`. */
export interface FakeSlackUpload {
  id: string;
  filename: string;
  title: string;
  altText?: string;
  bytes: Buffer;
  channel: string;
  threadTs?: string;
  initialComment?: string;
  /** The `ts` of the message that shares the file in `channel`. */
  ts: string;
}

/** An upload asked for with `files.getUploadURLExternal`, until completed. */
interface PendingUpload {
  filename: string;
  length: number;
  altText?: string;
  bytes?: Buffer;
}

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

  /**
   * True to answer `files.info` for the bot's uploads without their `shares`, as Slack does
   * while it is still sharing a file (it shares asynchronously, after
   * `files.completeUploadExternal` answered).
   */
  sharesPending = false;

  constructor(
    private readonly base: () => string,
    private readonly teamId: string,
    private readonly place: {
      nextTs(): string;
      botUserId: string;
      channelName(id: string): string | undefined;
    },
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

  /** The files the bot shared, in order. */
  readonly uploads: FakeSlackUpload[] = [];
  readonly #pending = new Map<string, PendingUpload>();

  /**
   * `files.getUploadURLExternal`, `files.completeUploadExternal` (which shares each file in a
   * message of its own, and answers without its `shares`, as Slack does) and `files.info` as
   * Slack answers them; undefined for any other method.
   */
  answer(method: string, params: Record<string, unknown>): Record<string, unknown> | undefined {
    if (method === 'files.info') return this.#info(String(params.file ?? ''));
    if (method === 'files.getUploadURLExternal') {
      const filename = String(params.filename ?? '');
      const length = Number(params.length);
      if (filename === '' || !Number.isSafeInteger(length) || length <= 0) {
        return { ok: false, error: 'invalid_arguments' };
      }
      const id = `F0UP${String(this.#next++).padStart(7, '0')}`;
      const altText = typeof params.alt_text === 'string' ? params.alt_text : undefined;
      this.#pending.set(id, { filename, length, ...(altText !== undefined && { altText }) });
      return { ok: true, upload_url: `${this.base()}/upload/v1/${id}`, file_id: id };
    }
    if (method !== 'files.completeUploadExternal') return undefined;
    let files: { id?: string; title?: string }[];
    try {
      files = JSON.parse(String(params.files ?? '[]')) as { id?: string; title?: string }[];
    } catch {
      return { ok: false, error: 'invalid_arguments' };
    }
    const channel = String(params.channel_id ?? '');
    const pending = files.map((file) => [file, this.#pending.get(file.id ?? '')] as const);
    if (pending.some(([, upload]) => upload?.bytes === undefined)) {
      return { ok: false, error: 'file_not_found' };
    }
    for (const [file, upload] of pending) {
      const id = file.id!;
      this.#pending.delete(id);
      this.held.put(id, { name: upload!.filename, content: upload!.bytes });
      this.uploads.push({
        id,
        filename: upload!.filename,
        title: file.title ?? upload!.filename,
        ...(upload!.altText !== undefined && { altText: upload!.altText }),
        bytes: upload!.bytes!,
        channel,
        ts: this.place.nextTs(),
        ...(typeof params.thread_ts === 'string' && { threadTs: params.thread_ts }),
        ...(typeof params.initial_comment === 'string' && {
          initialComment: params.initial_comment,
        }),
      });
    }
    return {
      ok: true,
      files: files.map((file) => ({ id: file.id, title: file.title ?? '' })),
    };
  }

  /**
   * `files.info` for a file the bot uploaded: the file, with `shares` naming the message that
   * shares it (`public` in a channel, `private` in a DM or private channel), by channel.
   */
  #info(id: string): Record<string, unknown> {
    const upload = this.uploads.find((file) => file.id === id);
    if (upload === undefined) return { ok: false, error: 'file_not_found' };
    const { channel, ts, threadTs } = upload;
    const name = this.place.channelName(channel);
    const share = {
      reply_users: [],
      reply_users_count: 0,
      reply_count: 0,
      ts,
      ...(threadTs !== undefined && { thread_ts: threadTs }),
      ...(name !== undefined && { channel_name: name }),
      team_id: this.teamId,
      share_user_id: this.place.botUserId,
      source: 'UNKNOWN',
    };
    const visibility = channel.startsWith('C') ? 'public' : 'private';
    const created = Math.floor(Number(ts));
    const file = {
      id,
      created,
      timestamp: created,
      name: upload.filename,
      title: upload.title,
      mimetype: '',
      user: this.place.botUserId,
      size: upload.bytes.length,
      mode: 'hosted',
      is_external: false,
      url_private: `${this.base()}/files-pri/${this.teamId}-${id}/${encodeURIComponent(upload.filename)}`,
      channels: visibility === 'public' ? [channel] : [],
      groups: visibility === 'private' && !channel.startsWith('D') ? [channel] : [],
      ims: channel.startsWith('D') ? [channel] : [],
      shares: this.sharesPending ? {} : { [visibility]: { [channel]: [share] } },
      has_more_shares: false,
    };
    return { ok: true, file, comments: [], response_metadata: { next_cursor: '' } };
  }

  /**
   * Takes the bytes POSTed to an upload URL (raw, or the file part of a multipart body): 200
   * when they are as long as asked for, else 400. False for any other path.
   */
  async receive(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const match = /^\/upload\/v1\/([\w]+)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || match === null) return false;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers['content-type'] ?? '';
    const file = type.includes('multipart/form-data')
      ? readMultipart(raw, type).find((part) => part.filename !== undefined)?.bytes
      : raw;
    const pending = this.#pending.get(match[1]!);
    if (pending === undefined || file === undefined || file.length !== pending.length) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad Request');
      return true;
    }
    pending.bytes = file;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${file.length}`);
    return true;
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
