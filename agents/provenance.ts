import type { StepResult, ToolSet } from 'ai';
import type { MessageSource } from '../src/types.js';

/**
 * The sources a run drew on, in order and each document/chunk once: every tool result
 * that carries `sources` (an array of `{ documentId, name?, chunk?, score? }`), then the
 * sources the model's provider reported (web or document citations: id or URL, title).
 *
 * @example
 * ```ts
 * // a retrieval tool returns its passages with where they came from
 * execute: async ({ query }) => ({ passages, sources: [{ documentId: 'kb/refunds.md', score: 0.8 }] })
 * sourcesOf(result.steps); // [{ documentId: 'kb/refunds.md', score: 0.8 }]
 * ```
 */
export function sourcesOf(steps: readonly StepResult<ToolSet>[]): MessageSource[] {
  const found: MessageSource[] = [];
  const seen = new Set<string>();
  const add = (source: MessageSource) => {
    const key = JSON.stringify([source.documentId, source.chunk ?? null]);
    if (seen.has(key)) return;
    seen.add(key);
    found.push(source);
  };
  for (const step of steps) {
    for (const part of step.content) {
      if (part.type === 'tool-result') toolSources(part.output).forEach(add);
    }
  }
  for (const step of steps) {
    for (const source of step.sources) {
      const documentId = source.sourceType === 'url' ? source.url : source.id;
      add(source.title === undefined ? { documentId } : { documentId, name: source.title });
    }
  }
  return found;
}

/** The well-formed entries of a tool result's `sources` array (others are ignored). */
function toolSources(output: unknown): MessageSource[] {
  const list = (output as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown) => {
    const { documentId, name, chunk, score } = (entry ?? {}) as Record<string, unknown>;
    if (typeof documentId !== 'string' || documentId === '') return [];
    return [
      {
        documentId,
        ...(typeof name === 'string' ? { name } : {}),
        ...(typeof chunk === 'string' || typeof chunk === 'number' ? { chunk: String(chunk) } : {}),
        ...(typeof score === 'number' && Number.isFinite(score) ? { score } : {}),
      },
    ];
  });
}
