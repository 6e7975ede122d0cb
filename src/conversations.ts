import { StoreError } from './errors.js';
import type { ConversationSummary, NewConversation } from './store.js';
import { defaultMetadata, type StoredMessage } from './types.js';

/**
 * Where a conversation created before its first turn lives, its defaults filled in as every
 * store fills them: `channelType` from the id's prefix (else `custom`), `channelId` the id,
 * scope `channel`.
 *
 * @example
 * ```ts
 * placeOf({ id: 'support:ticket-42' });
 * // { channelType: 'support', channelId: 'support:ticket-42', scope: 'channel' }
 * ```
 */
export function placeOf(
  input: NewConversation,
): Pick<ConversationSummary, 'channelType' | 'channelId' | 'channelName' | 'threadId' | 'scope'> {
  const defaults = defaultMetadata(input.id);
  return {
    channelType: input.channelType ?? defaults.channelType,
    channelId: input.channelId ?? defaults.channelId,
    ...(input.channelName === undefined ? {} : { channelName: input.channelName }),
    ...(input.threadId === undefined ? {} : { threadId: input.threadId }),
    scope: input.scope ?? 'channel',
  };
}

/** `createConversation` with an id that is taken: permanent, trying again cannot help. */
export function conversationExists(conversationId: string): StoreError {
  return new StoreError(`conversation ${JSON.stringify(conversationId)} exists already`, {
    conversationId,
    transient: false,
  });
}

/**
 * Drops a forgotten participant from a turn's mentions and reply link, in place: what
 * `forgetParticipant` does to everyone's turns (as SQLite deletes the `message_mentions`
 * rows and clears `reply_to_participant_id`).
 *
 * @example
 * ```ts
 * forgetLinks(turn, 'telegram:1001');
 * ```
 */
export function forgetLinks(message: StoredMessage, participantId: string): StoredMessage {
  const { metadata } = message;
  if (metadata.replyToParticipantId === participantId) delete metadata.replyToParticipantId;
  if (metadata.mentions?.includes(participantId)) {
    metadata.mentions = metadata.mentions.filter((id) => id !== participantId);
  }
  return message;
}

/**
 * Blanks a turn that `forgetParticipant` keeps in redact mode, in place: its text, its
 * author's name, its files (names, links, platform ids) and the metadata that repeats its
 * words (`slackText`, Slack's raw text; a command's `interaction.args`), as the SQL stores'
 * `redactMessages` does. The rest (who, when, where, mentions, a button's value) stays.
 *
 * @example
 * ```ts
 * redactTurn(turn).content; // ''
 * ```
 */
export function redactTurn(message: StoredMessage): StoredMessage {
  const { displayName: _, ...participant } = message.participant;
  const { slackText: __, ...metadata } = message.metadata;
  if (metadata.interaction?.type === 'command') {
    metadata.interaction = { ...metadata.interaction, args: '' };
  }
  const { attachments: ___, ...rest } = message;
  return { ...rest, content: '', participant, metadata };
}
