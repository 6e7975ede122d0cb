import { LogLevel } from '@slack/bolt';
import type { Agent, Bot, BotOptions } from 'colloquy';
import { SlackChannel, type SlackChannelOptions } from 'colloquy/slack';
import type { FakeSlack } from 'colloquy/testing';
import { startedBot, type StartedBot } from '../../fixtures/started-bot.js';

/** How the channel takes Slack's events: signed HTTP on a free port, or Socket Mode. */
export type SlackTransport = 'http' | 'socket';

/**
 * A Slack channel pointed at `slack`'s Web API, taking its events over signed HTTP on a free
 * port (set `slack.eventsUrl` to its `eventsUrl` once started).
 *
 * @example
 * ```ts
 * const channel = slackChannelOn(slack);
 * ```
 */
export function slackChannelOn(
  slack: FakeSlack,
  channelOptions: Partial<SlackChannelOptions> = {},
): SlackChannel {
  return new SlackChannel({
    token: slack.token,
    signingSecret: slack.signingSecret,
    port: 0,
    host: '127.0.0.1',
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: slack.slackApiUrl },
    ...channelOptions,
  });
}

/**
 * A started bot on a Slack channel pointed at `slack` (see `startedBot`), which delivers its
 * events to it: over signed HTTP by default, or Socket Mode.
 *
 * @example
 * ```ts
 * const { bot, errors } = await startSlackBot(slack, { store }, { replyInThread: false });
 * ```
 */
export async function startSlackBot(
  slack: FakeSlack,
  options: Partial<BotOptions> = {},
  channelOptions: Partial<SlackChannelOptions> = {},
  transport: SlackTransport = 'http',
): Promise<StartedBot & { channel: SlackChannel }> {
  const channel =
    transport === 'socket'
      ? new SlackChannel({
          token: slack.token,
          appToken: slack.appToken,
          logLevel: LogLevel.ERROR,
          clientOptions: { slackApiUrl: slack.slackApiUrl },
          ...channelOptions,
        })
      : slackChannelOn(slack, channelOptions);
  const started = await startedBot(channel, options);
  if (transport === 'socket') await slack.waitForSocket();
  else slack.eventsUrl = channel.eventsUrl;
  return { ...started, channel };
}

/** A started bot with `agent` on a Slack channel pointed at `slack` over HTTP events. */
export async function slackBotOn(
  slack: FakeSlack,
  agent: Agent,
  channelOptions: Partial<SlackChannelOptions> = {},
): Promise<Bot> {
  return (await startSlackBot(slack, { agents: [agent] }, channelOptions)).bot;
}
