import type { StepResult, ToolSet } from 'ai';
import type { OutboundFile } from '../src/channel.js';

/**
 * A file for a tool to return in its result's `files`: the agent's reply carries it (see
 * `filesOf`), while the model and the recorded tool result see only its name, type and size
 * (its JSON form), never the bytes.
 *
 * @example
 * ```ts
 * execute: async ({ month }) => ({
 *   summary: `invoice for ${month}`,
 *   files: [replyFile({ name: `invoice-${month}.pdf`, data: await render(month), mimeType: 'application/pdf' })],
 * }),
 * ```
 */
export function replyFile(file: OutboundFile): OutboundFile {
  const size = file.data instanceof Uint8Array ? file.data.byteLength : undefined;
  const about = { name: file.name, mimeType: file.mimeType, size };
  return Object.defineProperty({ ...file }, 'toJSON', { value: () => about, enumerable: false });
}

/**
 * The files a run's tool results carry (`{ files: [{ name, data, mimeType?, caption? }] }`),
 * in order; entries without a name or bytes are ignored.
 *
 * @example
 * ```ts
 * filesOf(result.steps); // [{ name: 'invoice-2026-10.pdf', data: Uint8Array(…), mimeType: 'application/pdf' }]
 * ```
 */
export function filesOf(steps: readonly StepResult<ToolSet>[]): OutboundFile[] {
  return steps.flatMap((step) =>
    step.content.flatMap((part) => (part.type === 'tool-result' ? toolFiles(part.output) : [])),
  );
}

function toolFiles(output: unknown): OutboundFile[] {
  const list = (output as { files?: unknown } | null)?.files;
  if (!Array.isArray(list)) return [];
  return list.filter((entry): entry is OutboundFile => {
    const { name, data } = (entry ?? {}) as Partial<OutboundFile>;
    return typeof name === 'string' && name !== '' && isBytes(data);
  });
}

function isBytes(data: unknown): boolean {
  return (
    data instanceof Uint8Array ||
    (typeof data === 'object' && data !== null && Symbol.asyncIterator in data)
  );
}
