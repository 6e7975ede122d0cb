/**
 * Which agents answer a turn: the one an interaction or a reaction names, else those it concerns (a mention,
 * a DM, a reply to the agent, `shouldRespond`), or a turn in a thread the agent opened; and
 * the agents a reply hands the conversation to by mentioning them.
 */
import { concerns, threadConcerns } from '../agent.js';
import type { Agent } from '../agent.js';
import type { Channel } from '../channel.js';
import { AgentError, StoreError, messageOf } from '../errors.js';
import type { ColloquyError } from '../errors.js';
import { answeredBy } from '../interactions.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage } from '../types.js';
import { reactionAgent } from './reactions.js';

/** What deciding who answers needs from the bot. */
export interface WantsDeps {
  storeFor(agent: Agent): ConversationStore;
  agentsOn(channel: Channel): readonly Agent[];
  aliasesOf(agent: Agent): readonly string[];
  report(error: ColloquyError): void;
}

/**
 * Whether `agent` answers `message`, from the turn alone (the runs planned at commit). `ours`:
 * the turn is another of the bot's agents', answered only by the agents it mentions.
 *
 * @example
 * ```ts
 * wantsNow(deps, agent, turn, deps.aliasesOf(agent), false);
 * ```
 */
export function wantsNow(
  deps: Pick<WantsDeps, 'report'>,
  agent: Agent,
  message: NewMessage,
  aliases: readonly string[],
  ours: boolean,
): boolean {
  const target = answeredBy(message) ?? reactionAgent(message);
  if (target !== undefined) return target === agent.id;
  try {
    if (ours && !(message.metadata.mentions ?? []).some((id) => aliases.includes(id))) return false;
    return agent.shouldRespond?.(message, aliases) ?? concerns(message, aliases);
  } catch (cause) {
    deps.report(agentError(agent, message, 'shouldRespond threw', cause));
    return false;
  }
}

/** `wantsNow`, or a turn in a thread the agent opened (which concerns it as a whole). */
export async function wants(
  deps: WantsDeps,
  agent: Agent,
  message: NewMessage,
  aliases: readonly string[],
  ours: boolean,
): Promise<boolean> {
  if (wantsNow(deps, agent, message, aliases, ours)) return true;
  if (ours || agent.shouldRespond !== undefined || message.scope !== 'thread') return false;
  try {
    return await threadConcerns(deps.storeFor(agent), message.conversationId, aliases);
  } catch (cause) {
    deps.report(
      new StoreError('could not read whether the agent opened this thread', {
        cause,
        conversationId: message.conversationId,
        messageId: message.id,
      }),
    );
    return false;
  }
}

/** The agents `reply` (answering `answered`) mentions, other than those `answered` is for. */
export function handedTo(
  deps: WantsDeps,
  reply: NewMessage,
  answered: NewMessage,
  channel: Channel,
): Agent[] {
  const agents = deps.agentsOn(channel);
  const ours = agents.some((agent) => agent.id === answered.participant.id);
  return agents.filter((agent) => {
    const aliases = deps.aliasesOf(agent);
    return (
      agent.id !== reply.participant.id &&
      (reply.metadata.mentions ?? []).some((id) => aliases.includes(id)) &&
      !wantsNow(deps, agent, answered, aliases, ours)
    );
  });
}

/** An agent's failure on a turn, said with the agent and the turn. */
export function agentError(
  agent: Agent,
  message: NewMessage,
  what: string,
  cause: unknown,
): AgentError {
  return new AgentError(`agent ${agent.id} ${what}: ${messageOf(cause)}`, {
    cause,
    conversationId: message.conversationId,
    messageId: message.id,
  });
}
