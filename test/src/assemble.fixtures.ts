import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryConversationStore } from 'colloquy';
import type {
  ConversationScope,
  ConversationStore,
  NewMessage,
  Participant,
  SummarizeInput,
  Summarizer,
} from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';

/** The stores prompt assembly is tested against: one factory per implementation. */
export const STORES: [string, () => { store: ConversationStore; dispose: () => Promise<void> }][] =
  [
    [
      'InMemoryConversationStore',
      () => {
        const store = new InMemoryConversationStore({ maxMessagesPerConversation: 200_000 });
        return { store, dispose: async () => store.close() };
      },
    ],
    [
      'SqliteConversationStore',
      () => {
        const dir = mkdtempSync(join(tmpdir(), 'colloquy-assemble-'));
        const store = SqliteConversationStore.open(join(dir, 'colloquy.db'));
        return {
          store,
          dispose: async () => {
            await store.close();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      },
    ],
  ];

export const AGENT = { id: 'support', name: 'Support' } as const;
export const BOT_USER = 'slack:U0BOT';
export const C = 'slack:T1:C1';
export const DM = 'slack:T1:D1';

export const alice: Participant = { kind: 'user', id: 'slack:U1', displayName: 'Alice' };
export const bob: Participant = { kind: 'user', id: 'slack:U2', displayName: 'Bob' };
export const nameless: Participant = { kind: 'user', id: 'slack:U3' };
export const peer: Participant = { kind: 'agent', id: 'billing', displayName: 'Billing' };
export const self: Participant = { kind: 'agent', id: AGENT.id, displayName: AGENT.name };
export const system: Participant = { kind: 'system', id: 'slack:system' };

const BASE = Date.parse('2026-11-21T09:00:00.000Z');

export interface TurnOptions {
  conversationId?: string;
  scope?: ConversationScope;
  mentions?: string[];
  replyTo?: string;
  /** Seconds after 09:00 UTC on 2026-11-21; also makes the id. */
  at?: number;
  metadata?: Record<string, unknown>;
}

let counter = 0;

/** A turn; each call is one second after the previous unless `at` says otherwise. */
export function turn(from: Participant, content: string, options: TurnOptions = {}): NewMessage {
  const at = options.at ?? counter;
  counter = Math.max(counter, at) + 1;
  const conversationId = options.conversationId ?? C;
  return {
    id: `${conversationId}:${at}:${from.id}`,
    conversationId,
    participant: from,
    content,
    timestamp: new Date(BASE + at * 1000).toISOString(),
    scope: options.scope ?? (conversationId === DM ? 'dm' : 'channel'),
    metadata: {
      channelType: 'slack',
      channelId: conversationId.split(':')[2] ?? 'C1',
      mentions: options.mentions ?? [],
      ...(options.replyTo === undefined ? {} : { replyToParticipantId: options.replyTo }),
      ...options.metadata,
    },
  };
}

/** The two rows an agent's tool use is recorded as. */
export function toolUse(
  callId: string,
  toolName: string,
  input: unknown,
  output: string,
): [NewMessage, NewMessage] {
  return [
    turn(self, JSON.stringify(input), {
      metadata: { toolRole: 'call', toolCallId: callId, toolName },
    }),
    turn(self, output, { metadata: { toolRole: 'result', toolCallId: callId, toolName } }),
  ];
}

export async function appendAll(store: ConversationStore, turns: NewMessage[]): Promise<void> {
  for (const t of turns) await store.append(t);
}

/** A summarizer that records what it was asked and answers with a numbered summary. */
export class RecordingSummarizer implements Summarizer {
  readonly calls: SummarizeInput[] = [];
  async summarize(input: SummarizeInput): Promise<string> {
    this.calls.push(input);
    return `summary #${this.calls.length} of ${input.turns.length} turns`;
  }
}
