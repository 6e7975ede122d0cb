import type { Interceptor, TurnContext } from './chain.js';
import type { Action, ActionSelect, CommandSpec } from './channel.js';
import type { ConversationStore } from './store.js';
import type { Interaction, NewMessage, Participant } from './types.js';

/**
 * A command the bot declares (`new Bot({ commands })`): registered where the platform lists
 * commands, and answered by `agent` (an agent id) or by `handler`. Its invocation is a turn
 * whose `metadata.interaction` is `{ type: 'command', name, args }` and whose text reads as the
 * person typed it (`/refund 4242`).
 *
 * @example
 * ```ts
 * const commands: Command[] = [
 *   { name: 'refund', description: 'Refund an order', agent: 'support-agent' },
 *   { name: 'ping', description: 'Is the bot up?', handler: () => 'pong' },
 * ];
 * ```
 */
export interface Command extends CommandSpec {
  /** The id of the agent that answers it. */
  agent?: string;
  /** Answers it without an agent: what it returns is the reply (nothing: no reply). */
  handler?: CommandHandler;
}

/**
 * Handles a command: gets the command turn's context and returns the reply's text (or nothing).
 *
 * @example
 * ```ts
 * const ping: CommandHandler = (ctx) => `pong, ${ctx.message.participant.displayName}`;
 * ```
 */
export type CommandHandler = (ctx: TurnContext) => string | void | Promise<string | void>;

/** Who answers the bot's own lines about interactions (unknown commands, refused presses). */
export const INTERACTIONS_PARTICIPANT: Participant = {
  kind: 'system',
  id: 'colloquy',
  displayName: 'colloquy',
};

/** Most recent turns (the agents' and the presser's) searched for the message pressed. */
const PRESSED_SEARCH_LIMIT = 500;

/** How many people's last presses on a message's button `RecentPresses` keeps. */
const RECENT_PRESSES = 10_000;

/**
 * The last press each person made on each message's button (or select), as presses arrive,
 * before the store has them: a second press with the same value is a double press.
 */
export class RecentPresses {
  readonly #last = new Map<string, { ids: Set<string>; value: string }>();

  /**
   * Whether `turn` repeats its person's last press of that button with the same value; a press
   * seen before (redelivered, with the same turn id) is no repeat and changes nothing.
   */
  repeats(turn: NewMessage): boolean {
    const interaction = interactionOf(turn);
    if (interaction?.type !== 'button') return false;
    const { conversationId, participant, id } = turn;
    const key = [conversationId, interaction.on, interaction.id, participant.id].join('\n');
    const last = this.#last.get(key);
    if (last?.ids.has(id)) return false;
    this.#last.delete(key);
    this.#last.set(key, { ids: (last?.ids ?? new Set()).add(id), value: interaction.value });
    if (this.#last.size > RECENT_PRESSES) this.#last.delete(this.#last.keys().next().value!);
    return last?.value === interaction.value;
  }
}

/** The interaction a turn is, if any. */
export function interactionOf(message: Pick<NewMessage, 'metadata'>): Interaction | undefined {
  const interaction = message.metadata.interaction;
  return typeof interaction === 'object' && interaction !== null ? interaction : undefined;
}

/**
 * Who may answer an interaction turn: its agent's id, `null` when no agent does (a handler, a
 * refusal), `undefined` for a turn that is no interaction (or a command a bot without
 * `commands` leaves to the usual rules).
 *
 * @example
 * ```ts
 * answeredBy(pressOnSupportReply); // 'support-agent'
 * ```
 */
export function answeredBy(message: Pick<NewMessage, 'metadata'>): string | null | undefined {
  const interaction = interactionOf(message);
  if (interaction === undefined) return undefined;
  if (interaction.agent !== undefined) return interaction.agent;
  const open = interaction.type === 'command' && interaction.handler === undefined;
  return open && interaction.refused === undefined ? undefined : null;
}

/**
 * The interaction turn as the bot records it: a command names its agent or handler (or is
 * refused as unknown, when the bot declares commands); a press names the agent whose message
 * was pressed (found among `agentIds`' recent turns in the conversation) and becomes a reply
 * to it, or is refused (unknown message or button, pressed by someone other than the person
 * the message answered, or `repeated`: the person's last press of that button had the same
 * value: a double press is answered once, a changed choice in a select each time).
 * `repeated` says the press repeats one that arrived just before (see `RecentPresses`).
 */
export async function resolveInteraction(
  turn: NewMessage,
  commands: readonly Command[] | undefined,
  store: ConversationStore,
  agentIds: readonly string[],
  repeated = false,
): Promise<NewMessage> {
  const interaction = interactionOf(turn);
  if (interaction === undefined) return turn;
  const withInteraction = (resolved: Interaction, more: Partial<NewMessage['metadata']> = {}) => ({
    ...turn,
    metadata: { ...turn.metadata, ...more, interaction: resolved },
  });
  if (interaction.type === 'command') {
    if (commands === undefined) return turn;
    const command = commands.find((c) => c.name === interaction.name);
    if (command === undefined)
      return withInteraction({ ...interaction, refused: 'unknown command' });
    if (command.handler !== undefined) return withInteraction({ ...interaction, handler: true });
    if (command.agent === undefined) return turn;
    const mentions = [...new Set([...(turn.metadata.mentions ?? []), command.agent])];
    return withInteraction({ ...interaction, agent: command.agent }, { mentions });
  }
  const refuse = (refused: string) => withInteraction({ ...interaction, refused });
  if (repeated) return refuse('repeated');
  if (agentIds.length === 0) return refuse('unknown message');
  const turns = await store.get(turn.conversationId, {
    participantIds: [...agentIds, turn.participant.id],
    limit: PRESSED_SEARCH_LIMIT,
  });
  const pressed = turns.find(
    ({ participant, metadata }) =>
      participant.id !== turn.participant.id &&
      (metadata.messageId === interaction.on ||
        (metadata.partMessageIds ?? []).includes(interaction.on)),
  );
  if (pressed === undefined) return refuse('unknown message');
  const actions = (pressed.metadata.actions ?? []) as readonly Action[];
  const select = pressed.metadata.select as ActionSelect | undefined;
  const button = actions.find((action) => action.id === interaction.id);
  const option =
    select?.id === interaction.id
      ? select.options.find((o) => o.value === interaction.value)
      : undefined;
  if (button === undefined && option === undefined) return refuse('unknown button');
  const answered = pressed.metadata.replyToParticipantId;
  if (turn.scope !== 'dm' && answered !== undefined && answered !== turn.participant.id) {
    return refuse('wrong user');
  }
  const value = option?.value ?? button?.value ?? interaction.id;
  const last = turns
    .filter((t) => t.id !== turn.id)
    .map(interactionOf)
    .findLast(
      (earlier) =>
        earlier?.type === 'button' &&
        earlier.refused === undefined &&
        earlier.on === interaction.on &&
        earlier.id === interaction.id,
    );
  if (last?.type === 'button' && last.value === value) return refuse('repeated');
  return {
    ...withInteraction(
      {
        ...interaction,
        value,
        agent: pressed.participant.id,
      },
      { replyToMessageId: interaction.on, replyToParticipantId: pressed.participant.id },
    ),
    content: option?.label ?? button?.label ?? turn.content,
  };
}

/** The one line a refused interaction is answered with. */
export function refusalLine(interaction: Interaction, commands: readonly Command[] = []): string {
  if (interaction.type === 'command') {
    const known = commands.map((c) => `/${c.name}`).join(', ');
    return `There is no /${interaction.name} command${known === '' ? '.' : `; try ${known}.`}`;
  }
  return interaction.refused === 'wrong user'
    ? 'Those buttons are for the person the message answered.'
    : 'That button is no longer available.';
}

/**
 * The interceptor that runs first for every turn: a refused interaction is answered with its
 * one line, a command with a handler by the handler, and neither goes on to the agents; once a
 * press is answered, the buttons of the message pressed are taken away (`Channel.clearActions`).
 *
 * @example
 * ```ts
 * compose([interactionsInterceptor(commands), ...interceptors, dispatch]);
 * ```
 */
export function interactionsInterceptor(
  commands: readonly Command[] | undefined,
): Interceptor<TurnContext> {
  return async (ctx, next) => {
    const interaction = interactionOf(ctx.message);
    if (interaction?.refused === 'repeated') return;
    if (interaction?.refused !== undefined) {
      await ctx.send(refusalLine(interaction, commands), INTERACTIONS_PARTICIPANT);
      return;
    }
    if (interaction?.type === 'command' && interaction.handler === true) {
      const command = commands?.find((c) => c.name === interaction.name);
      const text = await command?.handler?.(ctx);
      if (typeof text === 'string' && text.trim() !== '') {
        await ctx.send(text, INTERACTIONS_PARTICIPANT);
      }
      return;
    }
    await next();
    // A press answered: its message's buttons go, so the same choice is not offered again.
    if (interaction?.type === 'button' && interaction.agent !== undefined) {
      const { channelId, threadId } = ctx.message.metadata;
      await ctx.channel.clearActions?.({
        channelId,
        ...(threadId !== undefined && { threadId }),
        messageId: interaction.on,
      });
    }
  };
}

/**
 * The text a command turn reads as, as the person typed it.
 *
 * @example
 * ```ts
 * commandText('refund', '4242'); // '/refund 4242'
 * ```
 */
export function commandText(name: string, args: string): string {
  return args === '' ? `/${name}` : `/${name} ${args}`;
}

/** Registers `commands` on every channel that registers commands; failures are reported. */
export async function registerCommands(
  channels: readonly {
    type: string;
    registerCommands?(c: readonly CommandSpec[]): Promise<void>;
  }[],
  commands: readonly Command[],
  report: (error: unknown, channelType: string) => void,
): Promise<void> {
  const specs: CommandSpec[] = commands.map(({ name, description, options }) => ({
    name,
    description,
    ...(options !== undefined && { options }),
  }));
  for (const channel of channels) {
    try {
      await channel.registerCommands?.(specs);
    } catch (error) {
      report(error, channel.type);
    }
  }
}
