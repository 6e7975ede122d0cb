import type { Interceptor, TurnContext } from './chain.js';
import type { Action, ActionSelect, CommandSpec } from './channel.js';
import type { ConversationStore } from './store.js';
import { ColloquyError } from './errors.js';
import type { Interaction, MessageEdit, NewMessage, Participant, StoredMessage } from './types.js';
import { isoTimestamp } from './types.js';

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

/** A `limit` that reads every turn asked for (the most a Postgres LIMIT takes). */
const EVERY_TURN = 2 ** 31 - 1;

/** How many people's last presses on a message's button `RecentPresses` keeps. */
const RECENT_PRESSES = 10_000;

/**
 * How close (by the turns' timestamps) a second press of the same button with the same value
 * by the same person must come to be a double press (a double click, a client sending twice).
 */
export const DOUBLE_PRESS_MS = 2000;

/** Whether a press at `at` with `value` doubles the earlier one (see `DOUBLE_PRESS_MS`). */
function doubles(earlier: { value: string; at: number } | undefined, value: string, at: number) {
  return earlier?.value === value && Math.abs(at - earlier.at) < DOUBLE_PRESS_MS;
}

/**
 * The last press each person made on each message's button (or select), as presses arrive,
 * before the store has them: a second press with the same value within `DOUBLE_PRESS_MS` is
 * a double press.
 */
export class RecentPresses {
  readonly #last = new Map<string, { ids: Set<string>; value: string; at: number }>();

  /**
   * Whether `turn` doubles its person's last press of that button (same value, within
   * `DOUBLE_PRESS_MS`); a press seen before (redelivered, with the same turn id) is no repeat
   * and changes nothing.
   */
  repeats(turn: NewMessage): boolean {
    const interaction = interactionOf(turn);
    if (interaction?.type !== 'button') return false;
    const { conversationId, participant, id } = turn;
    const key = [conversationId, interaction.on, interaction.id, participant.id].join('\n');
    const last = this.#last.get(key);
    if (last?.ids.has(id)) return false;
    const at = Date.parse(turn.timestamp);
    this.#last.delete(key);
    this.#last.set(key, { ids: (last?.ids ?? new Set()).add(id), value: interaction.value, at });
    if (this.#last.size > RECENT_PRESSES) this.#last.delete(this.#last.keys().next().value!);
    return doubles(last, interaction.value, at);
  }
}

/**
 * The messages whose `once` buttons a press answered in this process used, until that press is
 * committed (from then on the store says so): another press of the message resolved meanwhile
 * is refused `used`, however close behind it came. The same press delivered again (the same
 * turn id) is no other press.
 */
export class UsedMessages {
  /** Per pressed message: the id of the press that used it. */
  readonly #by = new Map<string, string>();

  /** Whether a press other than `turn` used the message `turn` presses. */
  usedBefore(turn: NewMessage): boolean {
    const key = usedKey(turn);
    return key !== undefined && (this.#by.get(key) ?? turn.id) !== turn.id;
  }

  /** `turn`, a press answered, used its message's buttons. */
  use(turn: NewMessage): void {
    const key = usedKey(turn);
    if (key !== undefined) this.#by.set(key, turn.id);
  }

  /** `turn` is committed, or never will be here: the store alone says what it used. */
  settled(turn: NewMessage): void {
    const key = usedKey(turn);
    if (key !== undefined && this.#by.get(key) === turn.id) this.#by.delete(key);
  }
}

/** The message a press is on, as one string; undefined for a turn that is no press. */
function usedKey(turn: NewMessage): string | undefined {
  const interaction = interactionOf(turn);
  if (interaction?.type !== 'button') return undefined;
  const { channelType, channelId } = turn.metadata;
  return [turn.conversationId, channelType, channelId, interaction.on].join('\n');
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
 * The key a platform carries for a reply's button (`place`: its index), select (`'s'`) or
 * option (its index): the id or value itself when `fits` says the platform carries it and it
 * does not start with `#`, else `#<place>`, which `resolveInteraction` reads back from the
 * recorded reply. Any id then works, however long.
 *
 * @example
 * ```ts
 * actionKey('approve', 0, (key) => key.length <= 100); // 'approve'
 * actionKey('x'.repeat(200), 1, (key) => key.length <= 100); // '#1'
 * ```
 */
export function actionKey(id: string, place: number | 's', fits: (key: string) => boolean): string {
  return !id.startsWith('#') && fits(id) ? id : `#${place}`;
}

/** The place a `#<n>` key names, or undefined for a key that is an id itself. */
function placeOf(key: string): number | undefined {
  return /^#\d+$/.test(key) ? Number(key.slice(1)) : undefined;
}

/** The button or option of `actions` and `select` a press's keys name (see `actionKey`). */
function pressedAction(
  interaction: { id: string; value: string },
  actions: readonly Action[],
  select: ActionSelect | undefined,
): { button?: Action; option?: { label: string; value: string } } {
  const at = placeOf(interaction.id);
  const button = at !== undefined ? actions[at] : actions.find((a) => a.id === interaction.id);
  if (button !== undefined) return { button };
  if (select === undefined || (interaction.id !== select.id && interaction.id !== '#s')) return {};
  const n = placeOf(interaction.value);
  const options = select.options;
  const option = n !== undefined ? options[n] : options.find((o) => o.value === interaction.value);
  return option === undefined ? {} : { option };
}

/** The buttons and select recorded on a reply turn. */
function actionsOn(turn: Pick<NewMessage, 'metadata'>): {
  actions: readonly Action[];
  select: ActionSelect | undefined;
} {
  const { actions, select } = turn.metadata;
  return {
    actions: Array.isArray(actions) ? (actions as Action[]) : [],
    select: typeof select === 'object' && select !== null ? (select as ActionSelect) : undefined,
  };
}

/** Whether answering a press of `id` under `turn` takes the message's buttons away. */
function usedUp(turn: Pick<NewMessage, 'metadata'>, id: string): boolean {
  const { actions, select } = actionsOn(turn);
  const button = actions.find((a) => a.id === id);
  return button !== undefined ? button.once !== false : select?.once !== false;
}

/**
 * The message of one of `agentIds` that `press` (a turn of its conversation) was pressed on:
 * the turn whose platform message, or one of whose parts, is `on`, read by its platform id
 * however old it is; undefined when it is unknown, deleted or another participant's.
 */
async function pressedMessage(
  store: ConversationStore,
  press: NewMessage,
  agentIds: readonly string[],
  on: string,
): Promise<StoredMessage | undefined> {
  const { channelType, channelId } = press.metadata;
  const ref = { channelType, channelId, messageId: on };
  const found = await store.findMessage(press.conversationId, ref);
  const pressable =
    found !== undefined && found.deletedAt === undefined && agentIds.includes(found.participant.id);
  return pressable ? found : undefined;
}

/**
 * The turns replying to platform message `on` of `pressed` since it was posted, oldest first:
 * the presses answered on it among them, read from the replies to its author alone.
 */
function pressesOn(
  store: ConversationStore,
  pressed: StoredMessage,
  on: string,
): Promise<StoredMessage[]> {
  const replyTo = { participantId: pressed.participant.id, messageId: on };
  return store.get(pressed.conversationId, {
    sinceTimestamp: pressed.timestamp,
    replyTo,
    limit: EVERY_TURN,
  });
}

/**
 * The interaction turn as the bot records it: a command names its agent or handler (or is
 * refused: unknown, when the bot declares commands, or answered by an agent not on this
 * channel; an undeclared `/start`, which Telegram sends by itself, is left to the usual
 * rules); a press names the agent whose message was pressed (read by its platform id
 * among the conversation's turns, however old) and becomes a reply to it, or is refused (unknown message or
 * button, pressed by someone other than the person the message answered, `used`: a press of
 * a `once` button or select on that message was answered already, or `repeated`: the
 * person's last press of that button had the same value: a double press is answered once, a
 * changed choice in a select that stays each time). `repeated` says the press repeats one
 * that arrived just before (see `RecentPresses`); `used`, the messages presses not yet
 * committed used (see `UsedMessages`), which a press answered here of a `once` button joins.
 * Such a press carries the message it uses (`uses`): the store records that use in the press's
 * commit, and stores the press refused `used` when another press, of any instance, took it first.
 * A press's `#<n>` keys (see `actionKey`) are read back as the ids and values of the recorded
 * reply.
 */
export async function resolveInteraction(
  turn: NewMessage,
  commands: readonly Command[] | undefined,
  store: ConversationStore,
  agentIds: readonly string[],
  presses: { repeated?: boolean; used?: UsedMessages } = {},
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
    if (command === undefined && interaction.name === 'start') return turn;
    if (command === undefined)
      return withInteraction({ ...interaction, refused: 'unknown command' });
    if (command.handler !== undefined) return withInteraction({ ...interaction, handler: true });
    if (command.agent === undefined) return turn;
    if (!agentIds.includes(command.agent)) {
      return withInteraction({ ...interaction, refused: 'not here' });
    }
    const mentions = [...new Set([...(turn.metadata.mentions ?? []), command.agent])];
    return withInteraction({ ...interaction, agent: command.agent }, { mentions });
  }
  const refuse = (refused: string) => withInteraction({ ...interaction, refused });
  if (presses.repeated === true) return refuse('repeated');
  // Looked at before the store is read (a press leaves `used` once the store has it, which may
  // be while this press reads) and again after (a press answered while this one read).
  const usedHere = presses.used?.usedBefore(turn) === true;
  if (agentIds.length === 0) return refuse('unknown message');
  const pressed = await pressedMessage(store, turn, agentIds, interaction.on);
  if (pressed === undefined) return refuse('unknown message');
  const { actions, select } = actionsOn(pressed);
  const { button, option } = pressedAction(interaction, actions, select);
  if (button === undefined && option === undefined) return refuse('unknown button');
  const answered = pressed.metadata.replyToParticipantId;
  if (turn.scope !== 'dm' && answered !== undefined && answered !== turn.participant.id) {
    return refuse('wrong user');
  }
  const id = button?.id ?? select!.id;
  const value = option?.value ?? button?.value ?? id;
  const earlier = (await pressesOn(store, pressed, interaction.on))
    .filter((t) => t.id !== turn.id)
    .flatMap((t) => {
      const e = interactionOf(t);
      return e?.type === 'button' && e.refused === undefined && e.on === interaction.on
        ? [{ ...e, by: t.participant.id, at: Date.parse(t.timestamp) }]
        : [];
    });
  const last = earlier.findLast((e) => e.id === id && e.by === turn.participant.id);
  if (doubles(last, value, Date.parse(turn.timestamp))) return refuse('repeated');
  const usedNow = usedHere || presses.used?.usedBefore(turn) === true;
  if (usedNow || earlier.some((e) => usedUp(pressed, e.id))) return refuse('used');
  const once = usedUp(pressed, id);
  if (once) presses.used?.use(turn);
  return {
    ...withInteraction(
      {
        ...interaction,
        id,
        value,
        agent: pressed.participant.id,
        ...(once && { uses: pressed.id }),
      },
      { replyToMessageId: interaction.on, replyToParticipantId: pressed.participant.id },
    ),
    content: option?.label ?? button?.label ?? turn.content,
  };
}

/** The one line a refused interaction is answered with. */
export function refusalLine(interaction: Interaction, commands: readonly Command[] = []): string {
  if (interaction.type === 'command') {
    if (interaction.refused === 'not here') return `/${interaction.name} is not answered here.`;
    const known = commands.map((c) => `/${c.name}`).join(', ');
    return `There is no /${interaction.name} command${known === '' ? '.' : `; try ${known}.`}`;
  }
  return interaction.refused === 'wrong user'
    ? 'Those buttons are for the person the message answered.'
    : 'That button is no longer available.';
}

/** What the interactions interceptor records and reports through. */
export interface InteractionsOptions {
  /** Records the edit that showed a message's buttons used (through capture). */
  recordEdit?(edit: MessageEdit): Promise<unknown>;
  /** Told when the buttons of a message pressed could not be shown used. */
  report?(error: ColloquyError): void;
}

/**
 * The inbound chain's link after the user's interceptors (`inboundChain.queued`), so they see
 * and may stop every turn: a refused interaction is answered with its one line, a command with
 * a handler by the handler, and neither goes on to the agents; once a
 * press of a `once` button (the default) is answered, the message's buttons are shown used
 * (`Channel.editActions`) and that edit is recorded as an edit of the reply's buttons alone: its
 * text stays, `editedAt` says when the buttons went, and no revision is kept.
 *
 * @example
 * ```ts
 * compose([...interceptors, interactionsInterceptor(commands, { recordEdit, report }), dispatch]);
 * ```
 */
export function interactionsInterceptor(
  commands: readonly Command[] | undefined,
  options: InteractionsOptions = {},
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
    if (interaction?.type === 'button' && interaction.agent !== undefined) {
      await showUsed(ctx, { ...interaction, agent: interaction.agent }, options);
    }
  };
}

/** Shows the buttons of the message a press answered used, and records that edit. */
async function showUsed(
  ctx: TurnContext,
  interaction: { id: string; on: string; agent: string },
  options: InteractionsOptions,
): Promise<void> {
  if (ctx.channel.editActions === undefined) return;
  const pressed = await pressedMessage(ctx.store, ctx.message, [interaction.agent], interaction.on);
  if (pressed === undefined || !usedUp(pressed, interaction.id)) return;
  const { channelType, channelId, threadId, messageId, partMessageIds = [] } = pressed.metadata;
  if (messageId === undefined) return;
  const { actions, select } = actionsOn(pressed);
  try {
    await ctx.channel.editActions({
      channelId,
      ...(threadId !== undefined && { threadId }),
      messageIds: [messageId, ...partMessageIds],
      content: pressed.content,
      actions,
      ...(select !== undefined && { select }),
      chosen: { id: interaction.id, label: ctx.message.content },
    });
  } catch (cause) {
    options.report?.(
      new ColloquyError(`could not show the buttons of message ${interaction.on} used`, { cause }),
    );
    return;
  }
  const edit = { channelType, channelId, messageId, content: pressed.content };
  await options.recordEdit?.({ ...edit, editedAt: isoTimestamp() });
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

/**
 * The one line that says what is wrong with `commands` on a bot whose agents are `agentIds`
 * (every channel's), or undefined: a command answered by an agent the bot does not have is
 * a mistake in the settings, and the bot does not start with it.
 *
 * @example
 * ```ts
 * commandsProblem([{ name: 'refund', description: 'Refund', agent: 'billing' }], ['support']);
 * // 'the command /refund is answered by agent "billing", which is on no channel (agents: support)'
 * ```
 */
export function commandsProblem(
  commands: readonly Command[] | undefined,
  agentIds: readonly string[],
): string | undefined {
  const lost = commands?.find((c) => c.agent !== undefined && !agentIds.includes(c.agent));
  if (lost === undefined) return undefined;
  const agents = [...new Set(agentIds)].join(', ') || 'none';
  return `the command /${lost.name} is answered by agent "${lost.agent}", which is on no channel (agents: ${agents})`;
}

/**
 * Registers on every channel that registers commands the commands answered there: by a
 * handler, or by an agent among `agentsOn(channel)` (a command whose agent is elsewhere is
 * not listed, and is answered with one line if run anyway). Failures are reported.
 */
export async function registerCommands<
  C extends { type: string; registerCommands?(c: readonly CommandSpec[]): Promise<void> },
>(
  channels: readonly C[],
  commands: readonly Command[],
  agentsOn: (channel: C) => readonly string[],
  report: (error: unknown, channelType: string) => void,
): Promise<void> {
  for (const channel of channels) {
    const here = agentsOn(channel);
    const specs: CommandSpec[] = commands
      .filter((c) => c.agent === undefined || here.includes(c.agent))
      .map(({ name, description, options }) => ({
        name,
        description,
        ...(options !== undefined && { options }),
      }));
    try {
      await channel.registerCommands?.(specs);
    } catch (error) {
      report(error, channel.type);
    }
  }
}
