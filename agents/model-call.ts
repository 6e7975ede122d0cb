import { generateText, streamText, UnsupportedFunctionalityError } from 'ai';
import type { GenerateTextResult, ToolSet } from 'ai';

/** The options `generateText` and `streamText` share, as `BaseAgent` passes them. */
type CallOptions = Parameters<typeof generateText<ToolSet>>[0];

/** What `BaseAgent` reads from a model call, streamed or not. */
export type ModelCall = Pick<
  GenerateTextResult<ToolSet, never>,
  'text' | 'steps' | 'response' | 'totalUsage'
>;

/**
 * Calls the model: whole (`generateText`) without `onText`, else streamed (`streamText`), with
 * `onText` given the text so far of the step being written as it comes (a step after a tool
 * call starts over, as the answer is the last step's text). A model that fails to stream before
 * saying anything is called again with `generateText`. Rejects with the model's error.
 *
 * @example
 * ```ts
 * const result = await callModel({ model, messages }, (text) => ctx.stream?.(text));
 * ```
 */
export async function callModel(
  options: CallOptions,
  onText?: (textSoFar: string) => void,
): Promise<ModelCall> {
  if (onText === undefined) return generateText(options);
  let failure: { error: unknown } | undefined;
  const result = streamText({
    ...options,
    onError: ({ error }) => void (failure ??= { error }),
  } as Parameters<typeof streamText<ToolSet>>[0]);
  let text = '';
  let began = false;
  for await (const part of result.fullStream) {
    if (part.type === 'start-step') text = '';
    else if (part.type === 'text-delta') {
      began = true;
      text += part.text;
      onText(text);
    } else if (part.type === 'finish-step' || part.type === 'tool-result') {
      // A tool approved before the call has run: asking again would run it twice.
      began = true;
    } else if (part.type === 'error') failure ??= { error: part.error };
  }
  // A model that cannot stream (a test double without doStream, a provider that refuses) fails
  // before saying anything: it is asked again for the whole answer.
  if (failure !== undefined && !began && cannotStream(failure.error)) {
    return generateText(options);
  }
  if (failure !== undefined) throw failure.error;
  const [steps, response, totalUsage, final] = await Promise.all([
    result.steps,
    result.response,
    result.totalUsage,
    result.text,
  ]);
  return { text: final, steps, response, totalUsage } as ModelCall;
}

/** True when a model refused to stream as such (not an error any call would have). */
function cannotStream(error: unknown): boolean {
  if (UnsupportedFunctionalityError.isInstance(error)) return true;
  // The AI SDK's test double without `doStream`.
  return error instanceof Error && error.message === 'Not implemented';
}
