import { describe, expect, it } from 'vitest';
import type { ConversationStore } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';
import { run } from './lease-contract.js';

/**
 * What forgetting a person and deleting a conversation leave of their words beside the turns'
 * text: nothing in a redacted turn's metadata or files, nothing in a recorded prompt (a store
 * with a run ledger). Called from the store contract.
 *
 * @example
 * ```ts
 * describeForgetContract(() => store);
 * ```
 */
export function describeForgetContract(store: () => ConversationStore): void {
  describe('what forgetting leaves', () => {
    it('leaves none of their words in a redacted turn: Slack’s raw text, a command’s arguments, files', async () => {
      // given Alice's Slack mention, her command and her file
      const mention = said(C1, 'm1', `my code is ${SECRET}`);
      mention.metadata.slackText = `<@UBOT> my code is ${SECRET}`;
      mention.metadata.mentions = ['slack:UBOT'];
      const command = said(C1, 'm2', `/refund card ${SECRET}`);
      command.metadata.interaction = { type: 'command', name: 'refund', args: `card ${SECRET}` };
      const file = said(C1, 'm3', 'here it is');
      file.attachments = [
        { kind: 'file', name: `${SECRET}.pdf`, url: `https://files.example/${SECRET}.pdf` },
      ];
      for (const turn of [mention, command, file]) await store().append(turn);

      // when she is forgotten with her turns kept
      expect(await store().forgetParticipant(ALICE, { mode: 'redact' })).toBe(3);

      // then her turns stay, who and where and whom they named, without a word of hers
      const kept = await store().get(C1);
      expect(kept.map((m) => m.id)).toEqual(['m1', 'm2', 'm3']);
      expect(JSON.stringify(kept)).not.toContain(SECRET);
      expect(kept[0]?.metadata.mentions).toEqual(['slack:UBOT']);
      expect(kept[1]?.metadata.interaction).toMatchObject({ type: 'command', name: 'refund' });
    });

    it.each(['delete', 'redact'] as const)(
      'clears the recorded prompts of the runs in the conversations they wrote in (%s)',
      async (mode) => {
        if (store().commit === undefined) return expect(store().getRuns).toBeUndefined();
        // given runs that recorded Alice's words, and one in a conversation she never wrote in
        await answered(said(C1, 'm1', `my card is ${SECRET}`));
        await answered(said(C1, 'm2', 'and another thing', BOB));
        await answered(said(C2, 'm3', 'hello', BOB));

        // when she is forgotten
        await store().forgetParticipant(ALICE, { mode });

        // then no prompt of her conversations is kept, the runs are, and the other prompt too
        const runs = await store().getRuns!({});
        expect(runs.map((r) => r.messageId)).toEqual(['m1', 'm2', 'm3']);
        expect(JSON.stringify(runs)).not.toContain(SECRET);
        expect(runs.map((r) => r.prompt)).toEqual([undefined, undefined, prompt('hello')]);
      },
    );

    it.each(['delete', 'redact'] as const)(
      'clears the prompts and summaries of the threads under a turn of theirs (%s)',
      async (mode) => {
        // given Alice's turn in the channel, a thread under it where only Bob and the agent
        // wrote (its prompt and summary retell her turn), and a thread under Bob's turn
        const hers = said(C1, 'm1', `my card is ${SECRET}`);
        const his = said(C1, 'm2', 'deploy done', BOB);
        for (const turn of [hers, his]) await store().append(turn);
        const [T1, T2] = [threadUnder(hers), threadUnder(his)];
        const inT1 = inThread(said(T1, 'm3', 'which carrier?', BOB), hers);
        const inT2 = inThread(said(T2, 'm4', 'nice', BOB), his);
        const withPrompts = store().commit !== undefined;
        for (const [turn, parent] of [
          [inT1, hers],
          [inT2, his],
        ] as const) {
          if (withPrompts) await answered(turn, `${parent.content} / ${turn.content}`);
          else await store().append(turn);
        }
        await store().append(summaryIn(T1, `alice's card is ${SECRET}`, inT1));
        await store().append(summaryIn(T2, 'bob deployed', inT2));

        // when she is forgotten
        await store().forgetParticipant(ALICE, { mode });

        // then nothing of the thread under her turn retells her words; the other thread keeps its own
        expect(await store().getSummary(T1, 'support')).toBeUndefined();
        expect((await store().getSummary(T2, 'support'))?.content).toBe('bob deployed');
        expect(JSON.stringify(await store().get(T1, { includeSummaries: true }))).not.toContain(
          SECRET,
        );
        if (!withPrompts) return;
        const runs = await store().getRuns!({});
        expect(JSON.stringify(runs)).not.toContain(SECRET);
        expect(runs.find((r) => r.messageId === 'm4')?.prompt).toBe(prompt('deploy done / nice'));
      },
    );

    it('deletes the runs of a deleted conversation, and only those', async () => {
      if (store().commit === undefined) return expect(store().getRuns).toBeUndefined();
      await answered(said(C1, 'm1', `my card is ${SECRET}`));
      await answered(said(C2, 'm2', 'hello', BOB));
      expect(await store().deleteConversation(C1)).toBe(true);
      const runs = await store().getRuns!({});
      expect(runs.map((r) => r.messageId)).toEqual(['m2']);
    });
  });

  /** Appends `turn` and the run that answered it, its prompt recorded, in one commit. */
  async function answered(turn: NewMessage, content = turn.content): Promise<void> {
    const recorded = {
      ...run(turn.conversationId, turn.id, 'answered'),
      prompt: prompt(content),
    };
    const results = await store().commit!([
      { kind: 'append', message: turn },
      { kind: 'run', run: recorded, create: true },
    ]);
    expect(results.every((result) => result.ok)).toBe(true);
  }
}

const SECRET = 'quokkazanzibar7731';
const C1 = 'slack:T1:C1';
const C2 = 'slack:T1:C2';
const ALICE = 'slack:U1';
const BOB = 'slack:U2';

let seconds = 0;

/** A turn `id` of `who` (Alice unless told) saying `content` in `conversationId`. */
function said(conversationId: string, id: string, content: string, who = ALICE): NewMessage {
  seconds++;
  return {
    id,
    conversationId,
    participant: { kind: 'user', id: who, displayName: who === ALICE ? 'Alice' : 'Bob' },
    content,
    timestamp: new Date(Date.UTC(2026, 0, 3, 0, 0, seconds)).toISOString(),
    scope: 'channel',
    metadata: {
      channelType: 'slack',
      channelId: conversationId.split(':')[2]!,
      messageId: `${seconds}.000100`,
      mentions: [],
    },
  };
}

/** The conversation of the Slack thread under `parent`. */
function threadUnder(parent: NewMessage): string {
  return `${parent.conversationId}:${parent.metadata.messageId}`;
}

/** `turn` as a reply in the thread under `parent`, which lives in the channel's conversation. */
function inThread(turn: NewMessage, parent: NewMessage): NewMessage {
  turn.scope = 'thread';
  turn.metadata.threadId = parent.metadata.messageId;
  turn.metadata.threadParent = { conversationId: parent.conversationId, id: parent.id };
  return turn;
}

/** The agent's rolling summary of `conversationId`, folded from its turns up to `upTo`. */
function summaryIn(conversationId: string, content: string, upTo: NewMessage): NewMessage {
  const summary = said(conversationId, `${conversationId}:summary`, content, 'support');
  summary.participant = { kind: 'agent', id: 'support' };
  summary.metadata = {
    ...upTo.metadata,
    messageId: undefined,
    isSummary: true,
    summaryForAgentId: 'support',
  };
  return summary;
}

/** A prompt as the runner records it: the model messages, as JSON. */
function prompt(content: string): string {
  return JSON.stringify([{ role: 'user', content }]);
}
