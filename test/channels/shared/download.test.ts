import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AttachmentTooLargeError, NetworkError, PlatformError } from 'colloquy';
import { download } from '../../../channels/shared/download.js';
import { slackDownload } from '../../../channels/slack/download.js';

describe('download: a file’s bytes into memory, never past the cap', () => {
  let server: Server;
  let base: string;
  let handle: (req: IncomingMessage, res: ServerResponse) => void;
  const requests: IncomingMessage[] = [];

  beforeEach(async () => {
    requests.length = 0;
    server = createServer((req, res) => {
      requests.push(req);
      handle(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('stops reading a body without a length once it grows past the cap', async () => {
    const chunk = Buffer.alloc(64 * 1024, 1);
    let written = 0;
    const closed = new Promise<boolean>((resolve) => {
      handle = (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.on('close', () => resolve(res.writableEnded));
        const more = () => {
          while (written < 1024 && res.write(chunk)) written++;
          if (written < 1024) res.once('drain', more);
          else res.end();
        };
        more();
      };
    });
    const fetching = download(
      'discord',
      `${base}/big.png`,
      { maxBytes: 102_400 },
      { what: 'big.png' },
    );
    await expect(fetching).rejects.toBeInstanceOf(AttachmentTooLargeError);
    await expect(fetching).rejects.toThrow('the file big.png is over 100 KB; it was not read');
    // The 64 MB body was never sent whole: the connection closed under it.
    expect(await closed).toBe(false);
  });

  it('does not read a body whose length says it is over the cap', async () => {
    handle = (_req, res) =>
      res.writeHead(200, { 'content-length': '5000000' }).end(Buffer.alloc(5_000_000));
    await expect(
      download('discord', `${base}/big.bin`, { maxBytes: 1024 }, { what: 'big.bin' }),
    ).rejects.toMatchObject({ name: 'AttachmentTooLargeError', maxBytes: 1024 });
  });

  it('reads a file within the cap, with the type it was served as', async () => {
    handle = (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello');
    const file = await download('discord', `${base}/a.txt`, { maxBytes: 5 }, { what: 'a.txt' });
    expect(Buffer.from(file.bytes).toString()).toBe('hello');
    expect(file.mimeType).toBe('text/plain');
  });

  it('tells a refusal from no answer', async () => {
    handle = (_req, res) => res.writeHead(403).end('Forbidden');
    await expect(
      download('discord', `${base}/secret.png`, { maxBytes: 1024 }, { what: 'secret.png' }),
    ).rejects.toMatchObject({ name: 'PlatformError', code: 'http_403', transient: false });

    handle = () => undefined; // never answers
    const late = download(
      'discord',
      `${base}/slow.png`,
      { maxBytes: 1024, timeoutMs: 50 },
      { what: 'slow.png' },
    );
    await expect(late).rejects.toBeInstanceOf(NetworkError);
    await expect(late).rejects.toThrow('Could not reach Discord for the file slow.png: timed out');
  });

  it('takes a redirect from Slack as a refusal (a bad token goes to the sign-in page)', async () => {
    handle = (_req, res) => res.writeHead(302, { location: `${base}/signin` }).end();
    const file = { kind: 'image', name: 'a.png', url: `${base}/files-pri/T1-F1/a.png` };
    const fetching = slackDownload(
      file,
      { maxBytes: 1024 },
      { token: 'xoxb-1', apiUrl: `${base}/api/` },
    );
    await expect(fetching).rejects.toBeInstanceOf(PlatformError);
    await expect(fetching).rejects.toMatchObject({ code: 'http_302' });
    expect(requests.map((req) => req.url)).toEqual(['/files-pri/T1-F1/a.png']);
  });

  it('never sends the Slack bot token to a host that is not Slack’s', async () => {
    handle = (_req, res) => res.writeHead(200).end('stolen');
    const file = { kind: 'image', name: 'a.png', url: `${base}/a.png` };
    const elsewhere = { token: 'xoxb-1', apiUrl: 'https://slack.com/api/' };
    await expect(slackDownload(file, { maxBytes: 1024 }, elsewhere)).rejects.toMatchObject({
      code: 'file_not_fetchable',
    });
    expect(requests).toEqual([]);
  });
});
