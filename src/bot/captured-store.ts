import type { CaptureWriter } from '../capture.js';
import type {
  AppendOptions,
  ConversationStore,
  ConversationSummary,
  ForgetOptions,
  GetOptions,
  ListConversationsOptions,
  Page,
  SearchOptions,
} from '../store.js';
import type { MessageDeletion, MessageEdit, NewMessage, StoredMessage } from '../types.js';

/**
 * The store as the bot's agents, interceptors and users see it: every read first waits for
 * the captures asked for before it (`CaptureWriter.settled`), so a prompt always holds the
 * turn being answered and the replies sent before it, although no turn waits for its own
 * writes. Writes go straight to the store.
 *
 * @example
 * ```ts
 * const store = new CapturedStore(sqlite, writer);
 * void writer.append(reply);
 * await store.get(reply.conversationId); // holds the reply
 * ```
 */
export class CapturedStore implements ConversationStore {
  readonly getMessage?: (conversationId: string, id: string) => Promise<StoredMessage | undefined>;
  readonly has?: (message: NewMessage) => Promise<boolean>;

  constructor(
    /** The store itself, without the wait. */
    readonly store: ConversationStore,
    private readonly writer: CaptureWriter,
  ) {
    const { getMessage, has } = store;
    if (getMessage !== undefined) {
      this.getMessage = (conversation, id) =>
        this.#afterCaptures(() => getMessage.call(store, conversation, id));
    }
    if (has !== undefined)
      this.has = (message) => this.#afterCaptures(() => has.call(store, message));
  }

  get writesInOrder(): boolean | undefined {
    return this.store.writesInOrder;
  }

  flush(): void {
    this.store.flush?.();
  }

  append(message: NewMessage, options?: AppendOptions) {
    return this.store.append(message, options);
  }

  get(conversationId: string, options?: GetOptions): Promise<StoredMessage[]> {
    return this.#afterCaptures(() => this.store.get(conversationId, options));
  }

  search(conversationId: string, query: string, options?: SearchOptions) {
    return this.#afterCaptures(() => this.store.search(conversationId, query, options));
  }

  deleteMessages(conversationId: string, ids: string[]): Promise<number> {
    return this.#afterCaptures(() => this.store.deleteMessages(conversationId, ids));
  }

  listConversations(options?: ListConversationsOptions): Promise<Page<ConversationSummary>> {
    return this.#afterCaptures(() => this.store.listConversations(options));
  }

  getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.#afterCaptures(() => this.store.getConversation(conversationId));
  }

  deleteConversation(conversationId: string): Promise<boolean> {
    return this.#afterCaptures(() => this.store.deleteConversation(conversationId));
  }

  forgetParticipant(participantId: string, options?: ForgetOptions): Promise<number> {
    return this.#afterCaptures(() => this.store.forgetParticipant(participantId, options));
  }

  recordEdit(edit: MessageEdit): Promise<boolean> {
    return this.store.recordEdit(edit);
  }

  recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    return this.store.recordDeletion(deletion);
  }

  getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    return this.#afterCaptures(() => this.store.getSummary(conversationId, agentId));
  }

  /** After the captures asked for so far: reads, and deletions (which must not miss a queued turn). */
  async #afterCaptures<T>(call: () => Promise<T>): Promise<T> {
    await this.writer.settled();
    return call();
  }
}
