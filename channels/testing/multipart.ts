/**
 * A lenient `multipart/form-data` reader for the fakes: platforms accept what their client
 * libraries send (grammY writes `content-disposition:form-data;name="x";filename=a.pdf`, with
 * no spaces and an unquoted file name, which `Response.formData()` refuses).
 */

/** One part of a multipart body: a field (`filename` absent) or a file. */
export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  bytes: Buffer;
}

/**
 * The parts of a multipart body, in order; empty when `contentType` names no boundary.
 *
 * @example
 * ```ts
 * const parts = readMultipart(raw, req.headers['content-type'] ?? '');
 * parts.find((p) => p.name === 'payload_json')?.bytes.toString('utf8');
 * ```
 */
export function readMultipart(raw: Buffer, contentType: string): FormPart[] {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (boundary === undefined) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let at = raw.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (raw.subarray(start, start + 2).toString() === '--') break;
    const next = raw.indexOf(delimiter, start);
    if (next < 0) break;
    const part = raw.subarray(start + 2, next - 2); // after CRLF, before CRLF
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0) {
      const headers = part.subarray(0, split).toString('utf8');
      const disposition = /content-disposition:\s*([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      const name = param(disposition, 'name');
      const filename = param(disposition, 'filename');
      const type = /content-type:\s*([^\r\n;]*)/i.exec(headers)?.[1]?.trim();
      if (name !== undefined) {
        parts.push({
          name,
          ...(filename !== undefined && { filename }),
          ...(type !== undefined && { contentType: type }),
          bytes: Buffer.from(part.subarray(split + 4)),
        });
      }
    }
    at = next;
  }
  return parts;
}

function param(header: string, key: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${key}=(?:"([^"]*)"|([^;]*))`, 'i').exec(header);
  return match === null ? undefined : (match[1] ?? match[2]?.trim());
}
