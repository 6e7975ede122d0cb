/**
 * What `FakeTelegram` does for replies shown as they are written: `sendMessageDraft` in private
 * chats (an ephemeral preview; the empty draft is Telegram's "Thinking…"), the person's stop
 * button (`can_stop`, answered with a `stopped_message_generation` update), the edit rate limit
 * (429 with `parameters.retry_after`) and the refusal of an edit that changes nothing.
 * Internal to `FakeTelegram`.
 */
import type { Chat, Message, MessageEntity } from 'grammy/types';
import { EditWindow, type EditLimit } from '../testing/edit-limit.js';

/** A draft the bot showed with `sendMessageDraft`, as the person sees it now. */
export interface FakeTelegramDraft {
  chatId: number;
  draftId: number;
  message_thread_id?: number;
  /** The draft's text; empty while it shows "Thinking…". */
  text: string;
  /** True when the person has a button to stop the generation. */
  canStop: boolean;
  /** How many times the bot changed it. */
  updates: number;
  /** True once the person pressed stop. */
  stopped: boolean;
}

/** A refusal the fake answers with, as the Bot API words it. */
export interface DraftRefusal {
  code: number;
  description: string;
  retryAfter?: number;
}

/** Telegram's answer to an edit that would show what the message shows already. */
export const NOT_MODIFIED =
  'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';

/** Edits of one chat's messages the fake allows by default (`FakeTelegramOptions.editLimit`). */
export const DEFAULT_TELEGRAM_EDIT_LIMIT: EditLimit = { calls: 5, perMs: 3000 };
/** Drafts of one chat the fake allows by default (`FakeTelegramOptions.draftLimit`). */
export const DEFAULT_TELEGRAM_DRAFT_LIMIT: EditLimit = { calls: 10, perMs: 1000 };

/** The drafts, stop buttons and edit limits of one `FakeTelegram`. */
export class FakeTelegramStreaming {
  /** Every draft shown, by `<chat>:<draft_id>`. */
  readonly drafts = new Map<string, FakeTelegramDraft>();
  readonly #edits: EditWindow;
  readonly #draftWindow: EditWindow;

  constructor(editLimit: EditLimit, draftLimit: EditLimit) {
    this.#edits = new EditWindow(editLimit);
    this.#draftWindow = new EditWindow(draftLimit);
  }

  /** A 429 for an edit in `chatId` past the limit, or undefined when it may go ahead. */
  editRefusal(chatId: number): DraftRefusal | undefined {
    return tooMany(this.#edits.take(String(chatId)));
  }

  /**
   * Shows a draft in a private chat: refused outside one, without a `draft_id`, past the rate
   * limit, or with text Telegram would not show.
   */
  draft(
    chat: Chat,
    payload: Record<string, unknown>,
    shown: (payload: Record<string, unknown>) => { text: string },
  ): DraftRefusal | true {
    if (chat.type !== 'private') return { code: 400, description: 'Bad Request: chat not found' };
    const draftId = Number(payload.draft_id);
    if (!Number.isInteger(draftId) || draftId === 0) {
      return { code: 400, description: 'Bad Request: draft_id must be non-zero' };
    }
    const limited = tooMany(this.#draftWindow.take(String(chat.id)));
    if (limited !== undefined) return limited;
    const raw = typeof payload.text === 'string' ? payload.text : '';
    const text = raw === '' ? '' : shown(payload).text;
    const key = `${chat.id}:${draftId}`;
    const before = this.drafts.get(key);
    const threadId = payload.message_thread_id as number | undefined;
    this.drafts.set(key, {
      chatId: chat.id,
      draftId,
      ...(threadId !== undefined && { message_thread_id: threadId }),
      text,
      canStop: payload.can_stop === true,
      updates: (before?.updates ?? 0) + 1,
      stopped: before?.stopped ?? false,
    });
    return true;
  }

  /**
   * The person presses stop on the draft: the update Telegram sends the bot, or undefined when
   * the draft showed no stop button.
   */
  stop(chat: Chat, draftId: number): Record<string, unknown> | undefined {
    const draft = this.drafts.get(`${chat.id}:${draftId}`);
    if (draft === undefined || !draft.canStop || draft.stopped) return undefined;
    draft.stopped = true;
    return {
      stopped_message_generation: {
        chat,
        ...(draft.message_thread_id !== undefined && {
          message_thread_id: draft.message_thread_id,
        }),
        draft_id: draftId,
      },
    };
  }
}

/** True when `edited` shows exactly what `original` shows. */
export function unchanged(
  original: Message,
  edited: { text: string; entities: MessageEntity[] },
): boolean {
  const before = (original as Message.TextMessage).entities ?? [];
  return (
    (original as Message.TextMessage).text === edited.text &&
    JSON.stringify(before) === JSON.stringify(edited.entities)
  );
}

function tooMany(waitMs: number | undefined): DraftRefusal | undefined {
  if (waitMs === undefined) return undefined;
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    code: 429,
    description: `Too Many Requests: retry after ${retryAfter}`,
    retryAfter,
  };
}
