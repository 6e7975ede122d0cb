import type { BotIdentity, Channel } from './channel.js';
import type { ConversationStore } from './store.js';
import type { NewMessage, Participant } from './types.js';

/**
 * What every interceptor sees for one inbound turn. Interceptors may add fields; declare them
 * by widening the context type (`Interceptor<TurnContext & { locale: string }>`).
 */
export interface TurnContext {
  /** The inbound turn, as the channel parsed it. */
  readonly message: NewMessage;
  /** The channel it came through. */
  readonly channel: Channel;
  readonly store: ConversationStore;
  /**
   * Posts a reply in place (same thread, as a reply where the platform has them) as `from`,
   * through the outbox (recorded before the platform call, confirmed after), and returns the
   * outbound turn with the platform's message id.
   */
  readonly send: (content: string, from: Participant) => Promise<NewMessage>;
  /** How many agent turns in a row led to this one (0 for a person's turn). Loop guards read it. */
  readonly depth: number;
  /** Our identities on every started channel, for alias resolution. */
  readonly identities: readonly BotIdentity[];
}
