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
  async function answered(turn: NewMessage): Promise<void> {
    const recorded = {
      ...run(turn.conversationId, turn.id, 'answered'),
      prompt: prompt(turn.content),
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

/** A prompt as the runner records it: the model messages, as JSON. */
function prompt(content: string): string {
  return JSON.stringify([{ role: 'user', content }]);
}
