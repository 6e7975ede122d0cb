import type { IncomingMessage, ServerResponse } from 'node:http';

/** The default cap on a webhook request body: Telegram's updates are a few KB. */
export const DEFAULT_MAX_WEBHOOK_BODY_BYTES = 4 * 1024 * 1024;

/** A request body over the cap: answered 413, and not read further. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`request body over ${maxBytes} bytes`);
  }
}

/**
 * Reads a request body as UTF-8, at most `maxBytes` of it: a declared `Content-Length` over
 * the cap rejects before anything is read, and a longer (chunked) body rejects as soon as it
 * passes the cap; either way with {@link BodyTooLargeError} and the stream paused.
 *
 * @example
 * ```ts
 * const text = await readBoundedBody(req, 4 * 1024 * 1024);
 * ```
 */
export function readBoundedBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(new BodyTooLargeError(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData).pause();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/**
 * Answers 413 and closes the connection, so the rest of the body is never read (Node would
 * otherwise read and discard it to keep the connection alive).
 */
export function refuseTooLarge(res: ServerResponse): void {
  if (!res.headersSent) {
    res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
  }
  res.end('request body too large', () => res.socket?.destroy());
}
