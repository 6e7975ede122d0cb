import { describe, expect, it } from 'vitest';
import type { ReactionChange } from '../../src/reactions.js';
import { commitWith } from '../../src/commit.js';
import { PARTS_WITHIN, capabilitiesOf, type ConversationStore } from '../../src/store.js';
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
      store().recordReaction({
        ...REF,
        participantId: ALICE,
        reaction: '👍',
        at: at(1),
        ...change,
      });
    const read = () => store().getReactions(C, ID);

    // Stores `count` turns in conversations of another channel, 500 at a time: in one commit,
    // or (a store without a ledger) as many appends under way together.
    let filled = 0;
    const fill = async (count: number) => {
      const turns = Array.from({ length: count }, (_, i) => filler(filled + i));
      filled += count;
      const { ledger } = capabilitiesOf(store());
      for (let i = 0; i < turns.length; i += 500) {
        const batch = turns.slice(i, i + 500);
        if (ledger === undefined) await Promise.all(batch.map((turn) => store().append(turn)));
        else await ledger.commit(batch.map((message) => ({ kind: 'append', message })));
      }
    };

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

    it('keeps a reaction removed when its addition comes again after the removal', async () => {
      // given Alice's reaction added and removed
      await store().append(TURN);
      await record({});
      await record({ removed: true, at: at(2) });

      // when the platform delivers the addition again, then it changes nothing
      expect(await record({})).toBe(true);
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(2) },
      ]);
      // and when she adds it again later, it is open again
      await record({ at: at(3) });
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(2) },
        { participantId: ALICE, reaction: '👍', addedAt: at(3) },
      ]);
    });

    it('keeps a reaction added again open when an earlier removal comes again', async () => {
      // given Alice's reaction added, removed and added again
      await store().append(TURN);
      await record({});
      await record({ removed: true, at: at(2) });
      await record({ at: at(3) });

      // when the platform delivers the removal again, then the new reaction stays open
      await record({ removed: true, at: at(2) });
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(2) },
        { participantId: ALICE, reaction: '👍', addedAt: at(3) },
      ]);
    });

    it('keeps a reaction open that is put on again at the time it was taken back', async () => {
      // given Alice's reaction added, and removed a second later
      await store().append(TURN);
      await record({});
      await record({ removed: true, at: at(2) });

      // when she puts it on again within that second (Telegram dates changes in whole seconds)
      await record({ at: at(2) });

      // then it is open, and the same addition delivered again, or the first one, changes nothing
      await record({ at: at(2) });
      await record({});
      expect(await read()).toEqual([
        { participantId: ALICE, reaction: '👍', addedAt: at(1), removedAt: at(2) },
        { participantId: ALICE, reaction: '👍', addedAt: at(2) },
      ]);
    });

    it.each(['delete', 'redact'] as const)(
      'forgets the reactions a person put anywhere, and (%s) those on their deleted turns',
      async (mode) => {
        // given Alice's reactions on an agent's turn and on Bob's turn in another
        // conversation, Bob's reactions beside them, and Bob's reaction on Alice's own turn
        await store().append(TURN);
        await store().append(ALICE_TURN);
        await store().append(BOB_TURN);
        await record({});
        await record({ participantId: BOB, reaction: 'tada', at: at(2) });
        await record({ participantId: BOB, reaction: '❤️', messageId: '501', at: at(3) });
        await record({ ...BOB_REF, reaction: '👀', at: at(4) });
        await record({ ...BOB_REF, participantId: BOB, at: at(5) });

        // when Alice is forgotten
        await store().forgetParticipant(ALICE, { mode });

        // then none of her reactions remain, and Bob's on the turns that stay do
        expect(await read()).toEqual([{ participantId: BOB, reaction: 'tada', addedAt: at(2) }]);
        expect(await store().getReactions(D, BOB_TURN.id)).toEqual([
          { participantId: BOB, reaction: '👍', addedAt: at(5) },
        ]);
        expect(await store().getReactions(C, ALICE_TURN.id)).toEqual(
          mode === 'redact' ? [{ participantId: BOB, reaction: '❤️', addedAt: at(3) }] : [],
        );
      },
    );

    it('finds the reacted turn by its platform ids alone, in whichever conversation', async () => {
      await store().append(TURN);
      await store().append(BOB_TURN);
      expect(await store().findByPlatformRef(REF)).toMatchObject({ id: ID, conversationId: C });
      expect(await store().findByPlatformRef(BOB_REF)).toMatchObject({ id: BOB_TURN.id });
      expect(await store().findByPlatformRef({ ...REF, messageId: 'nowhere' })).toBeUndefined();
    });

    it('records a reaction on a later part of a split reply on the reply', async () => {
      // given a reply the platform took in three parts, and a turn of another channel
      // whose platform id is the same as the last part's
      await store().append({ ...TURN, metadata: { ...TURN.metadata, partMessageIds: PARTS } });
      await store().append({ ...BOB_TURN, metadata: { ...BOB_TURN.metadata, messageId: '503' } });

      // when Alice reacts on the last part
      expect(await record({ messageId: '503' })).toBe(true);

      // then the reply has her reaction, and the last part finds the reply in its channel only
      expect(await read()).toEqual([{ participantId: ALICE, reaction: '👍', addedAt: at(1) }]);
      const last = { ...REF, messageId: '503' };
      expect(await store().findByPlatformRef(last)).toMatchObject({ id: ID, conversationId: C });
      expect(await store().findByPlatformRef({ ...BOB_REF, messageId: '503' })).toMatchObject({
        id: BOB_TURN.id,
      });
      expect(await store().findByPlatformRef({ ...last, channelId: '87' })).toBeUndefined();
    });

    it("looks for a later part among the store's newest PARTS_WITHIN turns, store-wide", async () => {
      // given a split reply, then PARTS_WITHIN - 1 turns in conversations of another channel
      const reply = { ...TURN, metadata: { ...TURN.metadata, partMessageIds: PARTS } };
      await store().append(reply);
      await fill(PARTS_WITHIN - 1);
      const last = { ...REF, messageId: '503' };

      // then its last part is still found: the reply is the oldest of the newest turns
      expect(await store().findByPlatformRef(last)).toMatchObject({ id: ID });

      // when one more turn is stored
      await fill(1);

      // then its later parts are not looked for, though nothing was said in its channel since
      expect(await store().findByPlatformRef(last)).toBeUndefined();
      expect(await record({ messageId: '503' })).toBe(false);
      expect(await store().recordDeletion({ ...last, deletedAt: at(2) })).toBe(false);
      // and its first part is found however old, as is a part within its conversation
      expect(await record({})).toBe(true);
      const inConversation = await store().findMessage(C, last);
      expect(inConversation).toMatchObject({ id: ID });
      expect(inConversation?.deletedAt).toBeUndefined();
    });

    it('commits a reaction as capture hands it over, after the turn it is on in the same batch', async () => {
      const change = { ...REF, participantId: ALICE, reaction: '👎', at: at(1) };
      const results = await commitWith(store(), capabilitiesOf(store()).ledger, [
        { kind: 'reaction', change: { ...change, messageId: 'nowhere' } },
        { kind: 'append', message: TURN },
        { kind: 'reaction', change },
      ]);
      expect(results).toMatchObject([
        { ok: true, value: false },
        { ok: true },
        { ok: true, value: true },
      ]);
      expect(await read()).toEqual([{ participantId: ALICE, reaction: '👎', addedAt: at(1) }]);
    });

    it('refuses a reaction on an unknown message with false, and reads none there', async () => {
      expect(await record({ messageId: 'nowhere' })).toBe(false);
      expect(await store().getReactions(C, 'telegram:88:nowhere')).toEqual([]);
    });
  });
}

const C = 'telegram:88';
const ID = 'telegram:88:500';
const ALICE = 'telegram:1001';
const BOB = 'telegram:1002';
const REF = { channelType: 'telegram', channelId: '88', messageId: '500' };
const PARTS = ['502', '503'];

const TURN: NewMessage = {
  id: ID,
  conversationId: C,
  participant: { kind: 'agent', id: 'support-agent' },
  content: 'refunds take five days',
  timestamp: '2026-01-01T00:00:00.000Z',
  scope: 'dm',
  metadata: { channelType: 'telegram', channelId: '88', messageId: '500', mentions: [] },
};

const ALICE_TURN: NewMessage = {
  ...TURN,
  id: 'telegram:88:501',
  participant: { kind: 'user', id: ALICE, displayName: 'Alice' },
  content: 'my card is 4242',
  metadata: { ...TURN.metadata, messageId: '501' },
};

const D = 'telegram:89';
const BOB_REF = { channelType: 'telegram', channelId: '89', messageId: '600' };

const BOB_TURN: NewMessage = {
  ...TURN,
  id: 'telegram:89:600',
  conversationId: D,
  participant: { kind: 'user', id: BOB, displayName: 'Bob' },
  content: 'order 17 arrived',
  metadata: { ...TURN.metadata, ...BOB_REF },
};

/** The n-th turn of a channel other than the replies': 400 to a conversation. */
function filler(n: number): NewMessage {
  const conversationId = `telegram:90:${Math.floor(n / 400)}`;
  return {
    ...ALICE_TURN,
    id: `${conversationId}:${n}`,
    conversationId,
    content: `turn ${n}`,
    metadata: { ...TURN.metadata, channelId: '90', messageId: `${n}` },
  };
}

function at(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();
}
