import type { Api } from 'grammy';
import type { CallbackQuery, InlineKeyboardButton, Message } from 'grammy/types';
import type { CommandSpec, OutboundMessage } from '../../src/channel.js';
import { actionKey } from '../../src/interactions.js';
import type { NewMessage } from '../../src/types.js';
import { isoTimestamp } from '../../src/types.js';
import { chatName, conversationId, displayName, participantId, scopeOf, topicId } from './parse.js';

/**
 * Commands and buttons on Telegram: a message opening with a `bot_command` entity (`/start`,
 * `/refund@orders_bot 4242`) is a command turn; a reply's actions are an inline keyboard whose
 * `callback_data` is `b:<id>` (a button) or `s:<select id>:<value>` (an option of a select,
 * shown as a row of buttons), an id or value that would not fit Telegram's 64 bytes being
 * carried as its place (`b:#2`, `s:#s:#1`, see `actionKey`); a `callback_query` is a press.
 */

/** The most bytes of `callback_data` a button carries. */
const CALLBACK_DATA_BYTES = 64;

const fits = (data: string) => Buffer.byteLength(data) <= CALLBACK_DATA_BYTES;

/**
 * The inline keyboard for a reply's actions: one row of buttons, then one row per two options
 * of its select. Undefined when it has none.
 *
 * @example
 * ```ts
 * inlineKeyboard({ ...outbound, actions: [{ id: 'approve', label: 'Approve' }] });
 * // { inline_keyboard: [[{ text: 'Approve', callback_data: 'b:approve' }]] }
 * ```
 */
export function inlineKeyboard(
  message: Pick<OutboundMessage, 'actions' | 'select'>,
): { inline_keyboard: InlineKeyboardButton[][] } | undefined {
  const rows: InlineKeyboardButton[][] = [];
  const buttons = (message.actions ?? []).map((a, index) => ({
    text: a.label,
    callback_data: `b:${actionKey(a.id, index, (key) => fits(`b:${key}`))}`,
  }));
  if (buttons.length > 0) rows.push(buttons);
  const select = message.select;
  for (const [index, option] of (select?.options ?? []).entries()) {
    const whole = `s:${select!.id}:${option.value}`;
    const plain = !/[:#]/.test(select!.id) && !option.value.startsWith('#');
    const data = plain && fits(whole) ? whole : optionData(option.value, index);
    const button = { text: option.label, callback_data: data };
    if (index % 2 === 0) rows.push([button]);
    else rows.at(-1)!.push(button);
  }
  return rows.length === 0 ? undefined : { inline_keyboard: rows };
}

/** The data of option `index` whose select id does not fit: `s:#s:<value or #index>`. */
function optionData(value: string, index: number): string {
  return `s:#s:${actionKey(value, index, (key) => fits(`s:#s:${key}`))}`;
}

/** `parts` with the reply's inline keyboard under the last one. */
export function withKeyboard<P extends { payload: object }>(
  parts: P[],
  message: Pick<OutboundMessage, 'actions' | 'select'>,
): P[] {
  const keyboard = inlineKeyboard(message);
  const last = parts.at(-1);
  if (keyboard === undefined || last === undefined) return parts;
  return [...parts.slice(0, -1), { ...last, payload: { ...last.payload, reply_markup: keyboard } }];
}

/**
 * The turn a press is: by the person who pressed, in the pressed message's chat (and topic),
 * one per press: its id is the callback query's, which a redelivered update carries again.
 * Undefined for a query colloquy did not make (no message, or data not its own).
 *
 * @example
 * ```ts
 * pressTurn(update.callback_query)?.metadata.interaction; // { type: 'button', id: 'approve', … }
 * ```
 */
export function pressTurn(query: CallbackQuery): NewMessage | undefined {
  const message = query.message as Message | undefined;
  const data = query.data ?? '';
  const match = /^(?:b:(.+)|s:([^:]+):(.*))$/s.exec(data);
  if (message === undefined || match === null || typeof message.chat?.id !== 'number') {
    return undefined;
  }
  const [, button, selectId, value] = match;
  const id = button ?? selectId ?? '';
  const chat = message.chat;
  const topic = topicId(message);
  const label = message.reply_markup?.inline_keyboard
    .flat()
    .find((b) => 'callback_data' in b && b.callback_data === data)?.text;
  const on = String(message.message_id);
  const metadata: NewMessage['metadata'] = {
    channelType: 'telegram',
    channelId: String(chat.id),
    mentions: [],
    interaction: { type: 'button', id, value: value ?? id, on },
  };
  const name = chatName(chat);
  if (name !== undefined) metadata.channelName = name;
  if (topic !== undefined) metadata.threadId = String(topic);
  return {
    id: `telegram:${chat.id}:${on}:press:${query.id}`,
    conversationId: conversationId(chat.id, topic),
    participant: {
      kind: 'user',
      id: participantId(query.from.id),
      displayName: displayName(query.from),
    },
    content: label ?? id,
    timestamp: isoTimestamp(),
    scope: scopeOf(chat, topic),
    metadata,
  };
}

/**
 * Lists the commands in Telegram's menu (`setMyCommands`): the name and description only, as
 * Telegram shows no options.
 */
export async function setTelegramCommands(
  api: Api,
  commands: readonly CommandSpec[],
): Promise<void> {
  await api.setMyCommands(
    commands.map(({ name, description }) => ({ command: name, description })),
  );
}
