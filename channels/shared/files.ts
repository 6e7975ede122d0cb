/**
 * Files a reply sends (`OutboundMessage.files`), made ready for a platform: read into bytes,
 * each checked against the platform's size limit. A file over it is not sent: it is reported
 * once (a `PlatformError` with code `file_too_large`) and left out, and the reply goes on.
 */
import { formatBytes, kindOfMimeType } from '../../src/attachments.js';
import type { AttachmentKind, MessageAttachment } from '../../src/attachments.js';
import type { OutboundFile, OutboundMessage, SentMessage } from '../../src/channel.js';
import { ColloquyError, PlatformError, deliveryAfterFailure } from '../../src/errors.js';

/** A file read and ready to upload. */
export interface ReadyFile {
  name: string;
  bytes: Uint8Array;
  /** The file's MIME type (default `application/octet-stream`). */
  mimeType: string;
  kind: AttachmentKind;
  caption?: string;
}

/** How a channel posts a reply's files. */
export interface FilePosting {
  /** The platform's name, as errors say it (`Telegram`). */
  platform: string;
  conversationId: string;
  /** The largest file the platform takes, in bytes, for this file (Telegram: photos are smaller). */
  limit(file: Pick<ReadyFile, 'mimeType' | 'kind'>): number;
  /** Uploads one file; resolves with it, and the message that carries it, as the platform answered. */
  upload(file: ReadyFile): Promise<PostedFile>;
  /** Where a file that is not sent is reported (the channel's `handlers.error`). */
  report(error: ColloquyError): void;
  /** The error for an upload that failed (the channel's own mapping of platform errors). */
  fail(error: unknown): ColloquyError;
}

/** One file as the platform answered its upload. */
export interface PostedFile {
  file: MessageAttachment;
  /** The platform id of the message that carries the file, where the platform gives it. */
  messageId: string | undefined;
}

/** The files a reply posted, as the platform answered, and the ids of the messages carrying them. */
export interface PostedFiles {
  files: MessageAttachment[];
  /** In order; a file whose message the platform did not name has none. */
  messageIds: string[];
}

/**
 * Posts `files` one after the other, in order: each over its limit, or refused by the
 * platform, is reported (naming the file) and left out. Resolves with the files posted, as the
 * platform answered, and the messages that carry them; never rejects.
 *
 * @example
 * ```ts
 * const { files, messageIds } = await postFiles(message.files, { platform: 'Telegram', conversationId, limit, upload, report, fail });
 * ```
 */
export async function postFiles(
  files: readonly OutboundFile[] | undefined,
  posting: FilePosting,
): Promise<PostedFiles> {
  const posted: PostedFiles = { files: [], messageIds: [] };
  for (const file of files ?? []) {
    const mimeType = file.mimeType ?? 'application/octet-stream';
    const kind = kindOfMimeType(mimeType);
    const limit = posting.limit({ mimeType, kind });
    const { conversationId } = posting;
    try {
      const bytes = await readBytes(file.data, limit);
      if (bytes === undefined) {
        throw new PlatformError(
          posting.platform.toLowerCase(),
          `not sent: ${file.name} is over ${posting.platform}'s ${formatBytes(limit)} limit for a file`,
          { code: 'file_too_large', transient: false, conversationId },
        );
      }
      const ready = { name: file.name, bytes, mimeType, kind };
      const sent = await posting.upload(
        file.caption === undefined ? ready : { ...ready, caption: file.caption },
      );
      posted.files.push(sent.file);
      if (sent.messageId !== undefined) posted.messageIds.push(sent.messageId);
    } catch (cause) {
      // The platform's error, kept as it is (refused, rate-limited, network), naming the file.
      const error = cause instanceof ColloquyError ? cause : posting.fail(cause);
      if (!error.message.startsWith('not sent: ')) {
        error.message = `not sent: ${file.name}: ${error.message}`;
      }
      posting.report(error);
    }
  }
  return posted;
}

/** The bytes of `data`, or undefined once they pass `limit` (a stream is read no further). */
export async function readBytes(
  data: OutboundFile['data'],
  limit: number,
): Promise<Uint8Array | undefined> {
  if (data instanceof Uint8Array) return data.byteLength > limit ? undefined : data;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of data) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * What `Channel.send` answers for a message of files and no text, posted by `post` (which
 * hands each file not sent to the reporter it is given): the messages that carry the files are
 * its parts, the first one naming it (`id`, in the channel's own id scheme). When no file went
 * out it throws instead, so the post is recorded as the outbox records a failed send: the
 * failure that may have reached the platform (`unconfirmed`, a lost answer) or else the first
 * one (`failed`); the other failures are reported.
 *
 * @example
 * ```ts
 * return filesSent((report) => sendTelegramFiles(api, message, report), report);
 * ```
 */
export async function filesSent(
  post: (report: (error: ColloquyError) => void) => Promise<PostedFiles>,
  report: (error: ColloquyError) => void,
  id?: (first: string) => string | undefined,
): Promise<SentMessage> {
  const failures: ColloquyError[] = [];
  const posted = await post((error) => void failures.push(error));
  const thrown =
    posted.files.length > 0
      ? undefined
      : (failures.find((error) => deliveryAfterFailure(error) === 'unconfirmed') ?? failures[0]);
  for (const error of failures) if (error !== thrown) report(error);
  if (thrown !== undefined) throw thrown;
  const [first] = posted.messageIds;
  const named = first === undefined ? undefined : id?.(first);
  return {
    messageIds: posted.messageIds,
    ...(named !== undefined && { id: named }),
    files: posted.files,
  };
}

/**
 * True for a message of files and no text (a streamed reply's files, posted after its text):
 * the channel posts the files alone.
 *
 * @example
 * ```ts
 * filesOnly({ ...place, content: '', files: [report] }); // true
 * ```
 */
export function filesOnly(message: OutboundMessage): boolean {
  return message.content.trim() === '' && (message.files?.length ?? 0) > 0;
}
