import type { BotCommand, CallbackQuery, Message, User } from 'grammy/types';

/** One `answerCallbackQuery` the bot made. */
export interface FakeCallbackAnswer {
  id: string;
  /** False when it came after the deadline (or twice): Telegram refused it. */
  inTime: boolean;
}

/** What the fake's interactions need from the fake. */
export interface FakeTelegramInteractionsOptions {
  /**
   * How long after a press `answerCallbackQuery` is accepted, in ms (default 15 000); later,
   * Telegram answers 400 "query is too old". 0 refuses every answer (a test of a late one).
   */
  callbackDeadlineMs?: number;
}

/**
 * The commands and button presses of a `FakeTelegram`: `setMyCommands` is kept, a press is
 * a `callback_query` update on a message the bot sent, and `answerCallbackQuery` is accepted
 * once per query, within the deadline.
 *
 * @example
 * ```ts
 * const query = telegram.interactions.press(sent.message, ada, 'b:approve');
 * telegram.pushUpdate({ callback_query: query });
 * ```
 */
export class FakeTelegramInteractions {
  /** The commands `setMyCommands` listed last. */
  commands: BotCommand[] | undefined;
  /** Every `answerCallbackQuery`, in order. */
  readonly answers: FakeCallbackAnswer[] = [];
  readonly #deadlineMs: number;
  readonly #pressedAt = new Map<string, number>();
  #next = 1;

  constructor(options: FakeTelegramInteractionsOptions = {}) {
    this.#deadlineMs = options.callbackDeadlineMs ?? 15_000;
  }

  /** The callback query of `from` pressing the button whose `callback_data` is `data`. */
  press(message: Message, from: User, data: string): CallbackQuery {
    const id = `${from.id}${String(this.#next++).padStart(6, '0')}`;
    this.#pressedAt.set(id, Date.now());
    return {
      id,
      from,
      message,
      chat_instance: String(message.chat.id),
      data,
    } as CallbackQuery;
  }

  /** `setMyCommands`: checked as Telegram checks it. */
  setMyCommands(payload: Record<string, unknown>): true {
    const commands = payload.commands as BotCommand[] | undefined;
    if (!Array.isArray(commands) || commands.length > 100) {
      throw { code: 400, description: 'Bad Request: commands must be a list of at most 100' };
    }
    for (const command of commands) {
      if (!/^[a-z0-9_]{1,32}$/.test(command.command) || !command.description) {
        throw { code: 400, description: 'Bad Request: BOT_COMMAND_INVALID' };
      }
    }
    this.commands = commands;
    return true;
  }

  /** `answerCallbackQuery`: once per query, within the deadline. */
  answerCallbackQuery(payload: Record<string, unknown>): true {
    const id = String(payload.callback_query_id);
    const pressedAt = this.#pressedAt.get(id);
    this.#pressedAt.delete(id);
    const inTime = pressedAt !== undefined && Date.now() - pressedAt < this.#deadlineMs;
    this.answers.push({ id, inTime });
    if (!inTime) {
      throw {
        code: 400,
        description:
          'Bad Request: query is too old and response timeout expired or query ID is invalid',
      };
    }
    return true;
  }
}

/** Refuses an inline keyboard as Telegram does: a button's `callback_data` is 1 to 64 bytes. */
export function checkKeyboard(markup: unknown): void {
  const rows = (markup as { inline_keyboard?: unknown } | undefined)?.inline_keyboard;
  if (!Array.isArray(rows)) return;
  for (const button of rows.flat() as { callback_data?: unknown }[]) {
    const data = button.callback_data;
    if (typeof data !== 'string') continue;
    const bytes = Buffer.byteLength(data);
    if (bytes < 1 || bytes > 64) {
      throw { code: 400, description: 'Bad Request: BUTTON_DATA_INVALID' };
    }
  }
}
