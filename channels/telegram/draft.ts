import type { Api } from 'grammy';
import type {
  OutboundMessage,
  ReplyStream,
  SentMessage,
  StreamOptions,
} from '../../src/channel.js';
import { refusedMarkup, telegramParts, toColloquyError } from './format.js';
import type { TelegramPart } from './format.js';
import { followText } from '../shared/stream.js';
import { postTelegramPart } from './stream.js';

/** Least time between two changes of a draft while the answer is written. */
const DRAFT_EVERY_MS = 250;

/**
 * The drafts being written, by `<chat>:<draft_id>`: where a person's press of the stop button
 * (a `stopped_message_generation` update) is taken to the reply it stops.
 */
export class TelegramDrafts {
  readonly #stops = new Map<string, () => void>();

  /** Tells the reply writing draft `draftId` in `chatId` that the person stopped it. */
  stopped(chatId: number, draftId: number): boolean {
    const stop = this.#stops.get(`${chatId}:${draftId}`);
    stop?.();
    return stop !== undefined;
  }

  /** Follows a draft until `forget` is called. */
  follow(chatId: number, draftId: number, stop: () => void): () => void {
    const key = `${chatId}:${draftId}`;
    this.#stops.set(key, stop);
    return () => this.#stops.delete(key);
  }
}

/**
 * A reply in a private chat shown as it is written with `sendMessageDraft`: an ephemeral
 * preview, changed at most every 250 ms, with a button the person can stop the generation
 * with (`can_stop`). The `sendMessage` at the end is what persists; a part of a long answer is
 * sent (and persists) as soon as the text passes it, and the draft goes on with the next. A
 * draft Telegram refuses ends the previews, never the answer. The text of each draft and part
 * is recorded (`options.showing`) before it is sent; progress reports what the person sees
 * (`shown`) with the ids of the parts sent so far.
 *
 * @example
 * ```ts
 * const reply = draftStream(bot.api, outboundFor(turn, ''), drafts, { stopped: () => run.stop() });
 * reply.update('The order');
 * await reply.end('The order ships tomorrow.');
 * ```
 */
export function draftStream(
  api: Api,
  message: OutboundMessage,
  drafts: TelegramDrafts,
  options: StreamOptions = {},
): ReplyStream {
  const chatId = Number(message.channelId);
  const draftId = 1 + Math.floor(Math.random() * 0x7ffffffe);
  const sent: string[] = [];
  let timestamp: string | undefined;
  let drafted = '';
  let previews = true;
  let draftedAt = 0;
  const forget = drafts.follow(chatId, draftId, () => {
    previews = false;
    options.stopped?.();
  });

  const parts = (text: string) =>
    telegramParts({ ...message, content: text }).filter((part) => part.plainText.trim() !== '');

  /** Sends the parts of `text` up to `count`, each recorded before it is sent. */
  const post = async (text: string, count: number) => {
    const all = parts(text);
    while (sent.length < Math.min(count, all.length)) {
      await options.showing?.({ messageIds: [...sent], shown: text });
      const posted = await postTelegramPart(api, all[sent.length]!);
      if (sent.length === 0) timestamp = posted.timestamp;
      if (posted.id !== undefined) sent.push(posted.id);
    }
  };

  const draft = async ({ payload, plainText }: TelegramPart) => {
    const { text, parse_mode, message_thread_id } = payload;
    const other = {
      ...(message_thread_id !== undefined && { message_thread_id }),
      can_stop: true,
    };
    try {
      await api.sendMessageDraft(chatId, draftId, text, { ...other, parse_mode });
    } catch (error) {
      if (!refusedMarkup(error)) throw error;
      await api.sendMessageDraft(chatId, draftId, plainText, other);
    }
  };

  /** Sends the parts the text has passed, and shows the rest as the draft. */
  const follow = followText(async (followed) => {
    while (!followed.final) {
      const text = followed.latest;
      const all = parts(text);
      await post(text, all.length - 1);
      const rest = all[all.length - 1];
      if (previews && rest !== undefined && sent.length < all.length) {
        if (rest.payload.text !== drafted) {
          const wait = draftedAt + DRAFT_EVERY_MS - Date.now();
          if (wait > 0) await followed.pause(wait);
          if (followed.final) return;
          if (followed.latest !== text) continue; // newer words came: show those
          await options.showing?.({ messageIds: [...sent], shown: text });
          try {
            await draft(rest);
          } catch {
            previews = false; // the preview stops; the answer still comes with `end`
          }
          drafted = rest.payload.text;
          draftedAt = Date.now();
        }
      }
      options.progress?.({ messageIds: [...sent], shown: text });
      if (followed.latest === text) return;
    }
  });

  return {
    update: follow.update,
    async end(text) {
      await follow.ending(text);
      forget();
      try {
        follow.catching.rethrow();
        await post(text, Infinity);
      } catch (error) {
        throw toColloquyError(error, 'sendMessage', { conversationId: message.conversationId });
      }
      const result: SentMessage = { messageIds: [...sent] };
      return timestamp === undefined ? result : { ...result, timestamp };
    },
  };
}
