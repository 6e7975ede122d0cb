/**
 * Reactions a channel saw: recorded in the bot's store (a reaction is not a turn), and, when
 * the owner asks (`BotOptions.answerReactions`), a person's reaction on an agent's message
 * turned into a turn for that agent, which intake commits and the drain answers like any other.
 */
import type { Channel, Delivery } from '../channel.js';
import { mayPass } from '../errors.js';
import type { ReactionChange } from '../reactions.js';
import type { NewMessage, StoredMessage } from '../types.js';
import { samePlace } from '../types.js';
import { eventually } from './eventually.js';
import type { Running } from './running.js';

/**
 * Which reactions start the agent whose message they are on: `true` every emoji, or only
 * those listed, as the platform names them (`'👎'` on Discord and Telegram, `'-1'` or
 * `'thumbsdown'` on Slack), with any skin tone. Default: none.
 *
 * @example
 * ```ts
 * const answer: AnswerReactions = { emoji: ['👎', '-1', 'thumbsdown'] };
 * ```
 */
export type AnswerReactions = boolean | { emoji: readonly string[] };

/**
 * What a turn made of a reaction carries in `metadata.reaction`: the emoji, the reacted turn's
 * colloquy id, and the agent that wrote it (the one agent that answers).
 *
 * @example
 * ```ts
 * const reaction: ReactionTurn = { emoji: '👎', messageId: 'telegram:42:7', agentId: 'support' };
 * ```
 */
export interface ReactionTurn {
  emoji: string;
  messageId: string;
  agentId: string;
}

/** How much of the reacted message a reaction turn quotes. */
const QUOTED_CHARS = 80;

/**
 * A reaction a channel saw, recorded through capture (in order with the turns, and committed
 * later after a passing store failure). A message the store does not find is looked for again
 * once what capture holds is committed (a reply's confirmation, with its platform id, may be on
 * its way); one still unknown (posted before the bot ran) is left out with one log line.
 * `answered`: whether the message is known, rejecting with the store's error when the first try
 * failed (the platform may deliver the event again); `committed`: the same once capture has
 * committed it, however many tries that took, rejecting only when capture gives up on it.
 *
 * @example
 * ```ts
 * const { answered, committed } = captureReaction(bot, change);
 * const known = await answered.catch(() => committed);
 * ```
 */
export function captureReaction(
  bot: Pick<Running, 'capture' | 'logger'>,
  change: ReactionChange,
): { answered: Promise<boolean>; committed: Promise<boolean> } {
  const { capture, logger } = bot;
  const op = { kind: 'reaction', change } as const;
  let answer!: { resolve: (known: boolean) => void; reject: (error: unknown) => void };
  const answered = new Promise<boolean>((resolve, reject) => (answer = { resolve, reject }));
  // The first try answers when it finds the message or fails; the second answers either way.
  const tried = (attempt: { answered: Promise<boolean> }, last: boolean) =>
    attempt.answered.then((known) => {
      if (known || last) answer.resolve(known);
    }, answer.reject);
  const committed = (async () => {
    const first = capture.track(op);
    void tried(first, false);
    if (await first.committed) return true;
    await capture.settled();
    const again = capture.track(op);
    void tried(again, true);
    const known = await again.committed;
    if (!known) {
      const where = `${change.channelType}:${change.channelId}:${change.messageId}`;
      logger.info(
        `not recorded: reaction ${change.reaction} on a message the store does not have (${where})`,
        { channelType: change.channelType },
      );
    }
    return known;
  })();
  committed.catch(() => {}); // awaited only when the first answer was a failure
  return { answered, committed };
}

/**
 * Records a reaction and, when it is one the owner asks to answer, hands its turn to
 * `receive` (intake's path for a new turn: committed with its pending run, then drained);
 * `complete` (the channel's, see `ChannelHandlers.reaction`) is called only then.
 * Resolves once both are committed; rejects when either is not, so the platform may deliver
 * the reaction again (the same turn then: its id comes from the reaction). A reaction capture
 * holds for a retry has its turn handed over once it is committed, for a platform that does not
 * deliver it again (Discord).
 *
 * @example
 * ```ts
 * reaction: (change, complete) =>
 *   handleReaction(bot, change, channel, (turn) => intake.message(turn, channel), complete),
 * ```
 */
export async function handleReaction(
  bot: Pick<
    Running,
    'store' | 'capture' | 'logger' | 'options' | 'agentsOn' | 'stopping' | 'track'
  >,
  change: ReactionChange,
  channel: Channel,
  receive: (turn: NewMessage) => Promise<Delivery>,
  complete?: () => Promise<ReactionChange>,
): Promise<Delivery> {
  const { answered, committed } = captureReaction(bot, change);
  const known = await answered.catch((error: unknown) => {
    if (mayPass(error)) {
      void bot.track(async () => {
        if ((await eventually(committed, bot.stopping)) !== true) return;
        const turn = await reactionTurn(bot, change, channel, complete);
        const delivery =
          turn === undefined ? undefined : await receive(turn).catch(() => undefined);
        await delivery?.handled;
      });
    }
    throw error;
  });
  const turn = known ? await reactionTurn(bot, change, channel, complete) : undefined;
  return turn === undefined ? { handled: Promise.resolve() } : receive(turn);
}

/**
 * The turn a reaction becomes under `answerReactions`: an emoji added (never removed) by a
 * person (not a bot, not one of the bot's own identities) on a turn one of `channel`'s agents
 * wrote becomes, in that turn's conversation and thread, a turn of the person addressed to that
 * agent (`[reacted 👎 to Support: "…"]`). Its id comes from the reacted turn, the person and
 * the emoji, so a reaction delivered again is the same turn. Undefined for any other reaction.
 * Whether a bot reacted, and the person's name, come from `complete` when the channel gives
 * it, asked last: only a reaction that would otherwise be answered is looked up.
 *
 * @example
 * ```ts
 * const turn = await reactionTurn(bot, change, channel); // undefined: not answered
 * ```
 */
export async function reactionTurn(
  bot: Pick<Running, 'store' | 'options' | 'agentsOn'>,
  arrived: ReactionChange,
  channel: Channel,
  complete?: () => Promise<ReactionChange>,
): Promise<NewMessage | undefined> {
  const { store, options } = bot;
  if (!answers(options.answerReactions, arrived.reaction)) return undefined;
  if (arrived.removed === true || arrived.byBot === true) return undefined;
  const agents = bot.agentsOn(channel);
  const ours = new Set([
    ...agents.map((agent) => agent.id),
    ...options.channels.flatMap((c) => [c.botIdentity?.id, `${c.type}:bot`]),
  ]);
  if (ours.has(arrived.participantId)) return undefined;
  const reacted = await store.findByPlatformRef(arrived);
  const agent = agents.find((a) => a.id === reacted?.participant.id);
  if (reacted === undefined || agent === undefined || reacted.deletedAt !== undefined) {
    return undefined;
  }
  const change = complete === undefined ? arrived : await complete();
  if (change.byBot === true) return undefined;
  const author = reacted.participant.displayName ?? agent.name;
  const reaction: ReactionTurn = {
    emoji: change.reaction,
    messageId: reacted.id,
    agentId: agent.id,
  };
  return {
    id: `${reacted.id}:reaction:${change.participantId}:${change.reaction}`,
    conversationId: reacted.conversationId,
    participant: {
      kind: 'user',
      id: change.participantId,
      ...(change.displayName !== undefined && { displayName: change.displayName }),
    },
    content: `[reacted ${emojiText(change)} to ${author}: "${quoted(reacted)}"]`,
    timestamp: change.at,
    scope: reacted.scope,
    metadata: {
      ...samePlace(reacted),
      mentions: [agent.id],
      ...(reacted.metadata.messageId !== undefined && {
        replyToMessageId: reacted.metadata.messageId,
      }),
      replyToParticipantId: agent.id,
      reaction,
    },
  };
}

/** The agent a reaction turn is for (`metadata.reaction.agentId`); undefined for any other turn. */
export function reactionAgent(message: Pick<NewMessage, 'metadata'>): string | undefined {
  const reaction = message.metadata.reaction as Partial<ReactionTurn> | undefined;
  return typeof reaction?.agentId === 'string' ? reaction.agentId : undefined;
}

/**
 * Whether `answerReactions` asks to answer `emoji`, compared on the base emoji: a skin tone
 * (Slack's `::skin-tone-N`, a modifier U+1F3FB–U+1F3FF elsewhere) matches the emoji listed.
 */
function answers(option: AnswerReactions | undefined, emoji: string): boolean {
  if (option === undefined || option === false) return false;
  return option === true || option.emoji.some((listed) => baseEmoji(listed) === baseEmoji(emoji));
}

/** An emoji without its skin tone: `-1::skin-tone-3` is `-1`, `👎🏽` is `👎`. */
function baseEmoji(emoji: string): string {
  return emoji.replace(/::skin-tone-\d$/, '').replace(/[\u{1F3FB}-\u{1F3FF}]/gu, '');
}

/** A reaction as the model reads it: Slack's names as `:name:`, an emoji as itself. */
function emojiText(change: ReactionChange): string {
  return change.channelType === 'slack' ? `:${change.reaction}:` : change.reaction;
}

/** The reacted message's first characters, on one line. */
function quoted(message: StoredMessage): string {
  const chars = [...message.content.replace(/\s+/g, ' ').trim()];
  const cut = chars.length > QUOTED_CHARS;
  return cut ? `${chars.slice(0, QUOTED_CHARS).join('')}…` : chars.join('');
}
