import type { ModelMessage, ToolCallPart, ToolResultPart } from 'ai';
import { withPlaceholders } from '../attachments.js';
import type { Tokenizer } from '../tokenizer.js';
import type { NewMessage, Participant, StoredMessage } from '../types.js';

/**
 * Projection: how stored turns look from one agent's point of view. Its own turns become
 * `assistant`, people become `user` prefixed with their display name, other agents `user`
 * prefixed with `name (agent)`, system turns `system`; its own tool-call rows become an
 * assistant `tool-call` part followed by a `tool` message with the matching result.
 */

/**
 * Fixed cost, in tokens, that every assembled message adds on top of its content (roles and
 * separators in the provider's chat format).
 *
 * @example
 * ```ts
 * import { MESSAGE_OVERHEAD_TOKENS } from './projection.js';
 * const cost = defaultTokenizer.count('Alice: hi') + MESSAGE_OVERHEAD_TOKENS;
 * ```
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * The tool agents call to read a masked tool result back (provided by `agents/`).
 *
 * @example
 * ```ts
 * import { RECALL_TOOL_NAME } from './projection.js';
 * const tools = { [RECALL_TOOL_NAME]: recallToolResultTool(store, conversationId, agentId) };
 * ```
 */
export const RECALL_TOOL_NAME = 'recall_tool_result';

/**
 * The text that stands in for a large, older tool result in an assembled prompt. The
 * reference is the stored result row's message id, quoted; the `recall_tool_result` tool
 * takes it as its `id` argument and returns the full output.
 *
 * @example
 * ```ts
 * import { maskedToolResultNote } from './projection.js';
 * maskedToolResultNote('tool:agent-1:call_7:result', 1234);
 * // '[tool result masked: 1234 tokens; call recall_tool_result with id "tool:agent-1:call_7:result" to read it]'
 * ```
 */
export function maskedToolResultNote(messageId: string, tokens: number): string {
  return `[tool result masked: ${tokens} tokens; call ${RECALL_TOOL_NAME} with id ${JSON.stringify(messageId)} to read it]`;
}

/**
 * Tokens one assembled message costs against the budget: its text (tool calls: tool name and
 * JSON input; tool results: tool name and output) plus {@link MESSAGE_OVERHEAD_TOKENS}.
 *
 * @example
 * ```ts
 * import { countModelMessageTokens } from './projection.js';
 * import { defaultTokenizer } from 'colloquy';
 * countModelMessageTokens({ role: 'user', content: 'Alice: hi' }, defaultTokenizer); // 3 + 4
 * ```
 */
export function countModelMessageTokens(message: ModelMessage, tokenizer: Tokenizer): number {
  if (typeof message.content === 'string') {
    return MESSAGE_OVERHEAD_TOKENS + tokenizer.count(message.content);
  }
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  for (const part of message.content) {
    if (part.type === 'text') tokens += tokenizer.count(part.text);
    else if (part.type === 'tool-call') {
      tokens += tokenizer.count(part.toolName) + tokenizer.count(JSON.stringify(part.input) ?? '');
    } else if (part.type === 'tool-result') {
      const output = part.output;
      const value = 'value' in output ? output.value : output.type;
      tokens +=
        tokenizer.count(part.toolName) +
        tokenizer.count(typeof value === 'string' ? value : JSON.stringify(value));
    }
  }
  return tokens;
}

/** A turn projected to one text message. `prefix + content` is the message text. */
export interface TextUnit {
  kind: 'text';
  turn: StoredMessage;
  role: 'system' | 'user' | 'assistant';
  prefix: string;
  content: string;
}

/** One of the agent's tool calls with its result; always emitted (or dropped) together. */
export interface ToolUnit {
  kind: 'tool';
  call: StoredMessage;
  result: StoredMessage;
  toolCallId: string;
  toolName: string;
  input: unknown;
  output: string;
  /** Replace the output with {@link maskedToolResultNote}. */
  masked: boolean;
}

export type Unit = TextUnit | ToolUnit;

/** How a turn reads in the prompt, from the point of view of the agent known by `aliases`. */
export function projectTurn(turn: NewMessage, aliases: ReadonlySet<string>): TextUnit {
  const { participant } = turn;
  const asStored = turn as StoredMessage;
  if (aliases.has(participant.id)) {
    return { kind: 'text', turn: asStored, role: 'assistant', prefix: '', content: turn.content };
  }
  if (participant.kind === 'system') {
    return { kind: 'text', turn: asStored, role: 'system', prefix: '', content: turn.content };
  }
  const prefix = `${speakerLabel(participant)}: `;
  // Each file is named by a placeholder (kind, name, size); assembly may add the file itself
  // after the text (`withAttachments`).
  const content = withPlaceholders(turn.content, turn.attachments);
  return { kind: 'text', turn: asStored, role: 'user', prefix, content };
}

/** Line breaks and other control characters: each becomes a space. */
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/gu;
/** Invisible format characters (zero-width, bidi overrides): removed. */
const INVISIBLE = /\p{Cf}/gu;
/** The same, keeping the zero-width joiner that emoji sequences need. */
const INVISIBLE_BUT_ZWJ = /(?!\u200d)\p{Cf}/gu;
/** The labels prompts give agents, which no person's name may carry. */
const ROLE_LABEL = /\(\s*(?:agent|assistant)\s*\)/giu;

/**
 * How a participant is named in a prompt: its display name (or id) on one line, without
 * control or invisible characters, and `name (agent)` for agents. A person's name loses any
 * `(agent)` or `(assistant)` it carries, so a person called "billing-agent (agent)" cannot
 * pass for a peer agent.
 *
 * @example
 * ```ts
 * speakerLabel({ kind: 'user', id: 'slack:U1', displayName: 'billing-agent (agent)' }); // 'billing-agent'
 * speakerLabel({ kind: 'agent', id: 'billing', displayName: 'Billing' }); // 'Billing (agent)'
 * ```
 */
export function speakerLabel(participant: Participant): string {
  const clean = (text: string | undefined): string => {
    let name = (text ?? '').normalize('NFKC').replace(CONTROL, ' ');
    if (participant.kind !== 'agent') {
      const visible = name.replace(INVISIBLE, '');
      const unlabelled = visible.replace(ROLE_LABEL, ' ');
      if (unlabelled !== visible) name = unlabelled;
    }
    return name.replace(INVISIBLE_BUT_ZWJ, '').replace(/\s+/gu, ' ').trim();
  };
  const name = clean(participant.displayName) || clean(participant.id) || 'unknown';
  return participant.kind === 'agent' ? `${name} (agent)` : name;
}

function toolRole(turn: StoredMessage): 'call' | 'result' | undefined {
  const role = turn.metadata['toolRole'];
  return (role === 'call' || role === 'result') && typeof turn.metadata.toolCallId === 'string'
    ? role
    : undefined;
}

function parseInput(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/**
 * Groups chronological turns into units. Tool rows written by the agent pair up at the
 * position of the call: a result goes with the latest earlier call of the same
 * `toolCallId` (and `toolStep`) that has no result yet, so a server that says `call_0` in
 * every step still pairs right. A call without its result (or a result without its call) is
 * dropped. Tool rows written by anyone else are not projected, unless `shows(row)` says
 * so (delegation: the agent that delegated sees its delegate's tool use, a delegate sees the
 * tool results of the agent that delegated to it): those read as text from their author.
 */
export function projectTurns(
  turns: readonly StoredMessage[],
  aliases: ReadonlySet<string>,
  shows: (row: StoredMessage) => boolean = () => false,
): Unit[] {
  const slots: (Unit | undefined)[] = [];
  /** Calls still waiting for their result, newest last, by call id and step. */
  const open = new Map<string, { slot: number; call: StoredMessage }[]>();
  for (const turn of turns) {
    const role = toolRole(turn);
    if (role === undefined) {
      slots.push(projectTurn(turn, aliases));
      continue;
    }
    if (!aliases.has(turn.participant.id)) {
      if (shows(turn)) slots.push(foreignToolTurn(turn, role));
      continue;
    }
    const key = JSON.stringify([turn.metadata.toolCallId, turn.metadata['toolStep'] ?? null]);
    const waiting = open.get(key) ?? [];
    if (role === 'call') {
      waiting.push({ slot: slots.length, call: turn });
      open.set(key, waiting);
      slots.push(undefined);
      continue;
    }
    const paired = waiting.pop();
    if (paired === undefined) continue;
    const { slot, call } = paired;
    slots[slot] = {
      kind: 'tool',
      call,
      result: turn,
      toolCallId: turn.metadata.toolCallId as string,
      toolName: call.metadata.toolName ?? turn.metadata.toolName ?? 'unknown',
      input: parseInput(call.content),
      output: turn.content,
      masked: false,
    };
  }
  return slots.filter((unit): unit is Unit => unit !== undefined);
}

/** Another agent's tool row, as the text its author's turn reads as. */
function foreignToolTurn(turn: StoredMessage, role: 'call' | 'result'): TextUnit {
  const name = turn.metadata.toolName ?? 'unknown';
  const content =
    role === 'call'
      ? `called tool ${name} with ${turn.content}`
      : `tool ${name} returned: ${turn.content}`;
  return {
    kind: 'text',
    turn,
    role: 'user',
    prefix: `${speakerLabel(turn.participant)}: `,
    content,
  };
}

/** The stored rows a unit came from, chronological. */
export function unitTurns(unit: Unit): StoredMessage[] {
  return unit.kind === 'text' ? [unit.turn] : [unit.call, unit.result];
}

/** The model messages a unit becomes. */
export function renderUnit(unit: Unit, tokenizer: Tokenizer): ModelMessage[] {
  if (unit.kind === 'text') {
    const content = unit.prefix + unit.content;
    return [{ role: unit.role, content } as ModelMessage];
  }
  const callPart: ToolCallPart = {
    type: 'tool-call',
    toolCallId: unit.toolCallId,
    toolName: unit.toolName,
    input: unit.input,
  };
  const value = unit.masked
    ? maskedToolResultNote(unit.result.id, tokenizer.count(unit.output))
    : unit.output;
  const resultPart: ToolResultPart = {
    type: 'tool-result',
    toolCallId: unit.toolCallId,
    toolName: unit.toolName,
    output: { type: 'text', value },
  };
  return [
    { role: 'assistant', content: [callPart] },
    { role: 'tool', content: [resultPart] },
  ];
}
