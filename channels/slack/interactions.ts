import type { OutboundMessage } from '../../src/channel.js';
import { actionKey, commandText } from '../../src/interactions.js';
import { shortened } from '../shared/split.js';
import type { NewMessage } from '../../src/types.js';
import { isoTimestamp } from '../../src/types.js';
import { slackConversationId, slackParticipantId } from './parse.js';

/**
 * Slash commands and Block Kit on Slack. A slash command (declared in the app manifest, see
 * docs/slack.md) and a `block_actions` press become turns; Bolt's `ack()` is called once the
 * turn is committed (Slack's deadline is 3 s), and the answer is posted with
 * `chat.postMessage` like any reply. A reply's actions are an `actions` block under a
 * `section` block holding its text.
 */

/** What colloquy reads of a slash command request (Bolt's `SlashCommand`). */
export interface SlackCommandBody {
  team_id: string;
  channel_id: string;
  channel_name?: string;
  user_id: string;
  user_name?: string;
  command: string;
  text: string;
  trigger_id: string;
}

/** The most a `section` block's text holds; a longer text takes several sections. */
const SECTION_TEXT_LIMIT = 3000;

/**
 * The turn a slash command is: `/refund 4242` by the person, in the channel it was run in.
 *
 * @example
 * ```ts
 * commandTurn({ team_id: 'T1', channel_id: 'C1', user_id: 'U1', command: '/refund', text: '4242', trigger_id: '1.2' });
 * ```
 */
export function commandTurn(body: SlackCommandBody): NewMessage {
  const name = body.command.replace(/^\//, '').toLowerCase();
  const args = body.text.trim();
  const dm = body.channel_id.startsWith('D') || body.channel_name === 'directmessage';
  return {
    id: `slack:${body.team_id}:${body.channel_id}:command:${body.trigger_id}`,
    conversationId: slackConversationId(body.team_id, body.channel_id),
    participant: {
      kind: 'user',
      id: slackParticipantId(body.user_id),
      ...(body.user_name !== undefined && { displayName: body.user_name }),
    },
    content: commandText(name, args),
    timestamp: isoTimestamp(),
    scope: dm ? 'dm' : 'channel',
    metadata: {
      channelType: 'slack',
      channelId: body.channel_id,
      ...(body.channel_name !== undefined && !dm && { channelName: body.channel_name }),
      mentions: [],
      interaction: { type: 'command', name, args },
    },
  };
}

/** What colloquy reads of a `block_actions` payload. */
export interface SlackBlockActionsBody {
  type: string;
  trigger_id?: string;
  team?: { id?: string } | null;
  user: { id: string; name?: string; username?: string };
  channel?: { id?: string; name?: string };
  container?: { message_ts?: string; thread_ts?: string; channel_id?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: {
    action_id?: string;
    action_ts?: string;
    value?: string;
    type?: string;
    text?: { text?: string };
    selected_option?: { value?: string; text?: { text?: string } };
  }[];
}

/**
 * The turn a press is, one per press (its id is the payload's `trigger_id`, the same if the
 * payload comes again); undefined for a payload that is not a press on a message.
 *
 * @example
 * ```ts
 * pressTurn(body, 'T1')?.metadata.interaction; // { type: 'button', id: 'approve', value: 'approve', on: '1700000000.000200' }
 * ```
 */
export function pressTurn(body: SlackBlockActionsBody, teamId: string): NewMessage | undefined {
  const action = body.actions?.[0];
  const channel = body.channel?.id ?? body.container?.channel_id;
  const on = body.message?.ts ?? body.container?.message_ts;
  const press = body.trigger_id ?? action?.action_ts;
  if (body.type !== 'block_actions' || action?.action_id === undefined) return undefined;
  if (channel === undefined || on === undefined || press === undefined) return undefined;
  const thread = body.message?.thread_ts ?? body.container?.thread_ts;
  const dm = channel.startsWith('D');
  const inThread = thread !== undefined && thread !== on;
  const id = action.action_id;
  const value = action.selected_option?.value ?? action.value ?? id;
  const team = body.team?.id ?? teamId;
  const name = body.user.name ?? body.user.username;
  return {
    id: `slack:${team}:${channel}:${on}:press:${press}`,
    conversationId: slackConversationId(team, channel, inThread ? thread : undefined),
    participant: {
      kind: 'user',
      id: slackParticipantId(body.user.id),
      ...(name !== undefined && { displayName: name }),
    },
    content: action.selected_option?.text?.text ?? action.text?.text ?? value,
    timestamp: isoTimestamp(),
    scope: dm ? 'dm' : inThread ? 'thread' : 'channel',
    metadata: {
      channelType: 'slack',
      channelId: channel,
      ...(body.channel?.name !== undefined && !dm && { channelName: body.channel.name }),
      ...(inThread && { threadId: thread }),
      mentions: [],
      interaction: { type: 'button', id, value, on },
    },
  };
}

/** Slack's limits on Block Kit elements (characters). */
const ACTION_ID_LIMIT = 255;
const BUTTON_VALUE_LIMIT = 2000;
const OPTION_VALUE_LIMIT = 150;
const LABEL_LIMIT = 75;

const plain = (text: string) => ({ type: 'plain_text', text: shortened(text, LABEL_LIMIT) });

/**
 * The Block Kit blocks for the last part of a reply with actions: its text as `section`s, then
 * an `actions` block with the buttons and the select (an `action_id` or value longer than
 * Slack allows is carried as its place, see `actionKey`; a label is shortened). Undefined
 * without actions.
 *
 * @example
 * ```ts
 * slackBlocks('Refund?', { actions: [{ id: 'approve', label: 'Approve', style: 'primary' }] });
 * ```
 */
export function slackBlocks(
  text: string,
  message: Pick<OutboundMessage, 'actions' | 'select'>,
): object[] | undefined {
  const within = (limit: number) => (key: string) => key.length <= limit;
  const elements: object[] = (message.actions ?? []).map((action, index) => ({
    type: 'button',
    action_id: actionKey(action.id, index, within(ACTION_ID_LIMIT)),
    text: plain(action.label),
    value: actionKey(action.value ?? action.id, index, within(BUTTON_VALUE_LIMIT)),
    ...(action.style === 'primary' || action.style === 'danger' ? { style: action.style } : {}),
  }));
  const select = message.select;
  if (select !== undefined) {
    elements.push({
      type: 'static_select',
      action_id: actionKey(select.id, 's', within(ACTION_ID_LIMIT)),
      placeholder: plain(select.placeholder ?? 'Choose'),
      options: select.options.map(({ label, value }, index) => ({
        text: plain(label),
        value: actionKey(value, index, within(OPTION_VALUE_LIMIT)),
      })),
    });
  }
  if (elements.length === 0) return undefined;
  return [...sections(text), { type: 'actions', elements }];
}

/**
 * The blocks of a message whose press was answered: its text, and in place of its buttons
 * what was chosen (Slack has no disabled buttons), as plain text: a label written by an agent
 * cannot ping (`<!channel>`) or disguise a link.
 *
 * @example
 * ```ts
 * usedBlocks('Refund?', 'Approve'); // sections, then a context block '✓ Approve'
 * ```
 */
export function usedBlocks(text: string, chosen: string): object[] {
  const line = { type: 'plain_text', text: `✓ ${shortened(chosen, SECTION_TEXT_LIMIT - 2)}` };
  return [...sections(text), { type: 'context', elements: [line] }];
}

/** `text` as `section` blocks of at most 3000 characters each. */
function sections(text: string): object[] {
  const blocks: object[] = [];
  for (let at = 0; at < text.length; at += SECTION_TEXT_LIMIT) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: text.slice(at, at + SECTION_TEXT_LIMIT) },
    });
  }
  return blocks;
}
