import { describe, expect, it } from 'vitest';
import type { ReactionChange } from '../../src/reactions.js';
import type { ConversationStore } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';

/**
 * What every store keeps of reactions: added and removed on a turn found by its platform ids,
 * read back oldest first with the removed ones, once per person and reaction while open, and
 * a reaction on an unknown message refused with `false`. Called from the store contract.
 *
 * @example
 * ```ts
 * describeReactionContract(() => store);
 * ```
 */
export function describeReactionContract(store: () => ConversationStore): void {
  describe('reactions', () => {
    const record = (change: Partial<ReactionChange>) =>
      store().recordReaction!({
        ...REF,
        participantId: ALICE,
        reaction: '👍',
        at: at(1),
        ...change,
      });
    const read = () => store().getReactions!(C, ID);

    it('records a reaction added and then removed, and reads both times back', async () => {
      await store().append(TURN);
      expect(await record({})).toBe(true);
      expect(await read()).toEqual([{ participantId: ALICE, reaction: '👍', addedAt: at(1) }]);
      expect(await record({ removed: true, at: at(2) })).toBe(true);
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(2) },
      ]);
    });

    it('keeps a change from one reaction to another as a removal and an addition', async () => {
      await store().append(TURN);
      await record({});
      await record({ removed: true, at: at(2) });
      await record({ reaction: '👎', at: at(2) });
      await record({ participantId: BOB, reaction: 'party_parrot', at: at(3) });
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(2) },
        { participantId: ALICE, reaction: '👎', addedAt: at(2) },
        { participantId: BOB, reaction: 'party_parrot', addedAt: at(3) },
      ]);
    });

    it('keeps one open reaction per person and emoji when it is delivered twice', async () => {
      await store().append(TURN);
      await record({});
      await record({ at: at(5) });
      await record({ removed: true, at: at(6) });
      await record({ removed: true, at: at(7) });
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(6) },
      ]);
    });

    it('refuses a reaction on an unknown message with false, and reads none there', async () => {
      expect(await record({ messageId: 'nowhere' })).toBe(false);
      expect(await store().getReactions!(C, 'telegram:88:nowhere')).toEqual([]);
    });
  });
}

const C = 'telegram:88';
const ID = 'telegram:88:500';
const ALICE = 'telegram:1001';
const BOB = 'telegram:1002';
const REF = { channelType: 'telegram', channelId: '88', messageId: '500' };

const TURN: NewMessage = {
  id: ID,
  conversationId: C,
  participant: { kind: 'agent', id: 'support-agent' },
  content: 'refunds take five days',
  timestamp: '2026-01-01T00:00:00.000Z',
  scope: 'dm',
  metadata: { channelType: 'telegram', channelId: '88', messageId: '500', mentions: [] },
};

function at(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();
}
