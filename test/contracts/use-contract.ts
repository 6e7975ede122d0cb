import { describe, expect, it } from 'vitest';
import { commitWith } from '../../src/commit.js';
import type { AgentRun } from '../../src/runs.js';
import { capabilitiesOf, type ConversationStore, type StoreOperation } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';

/**
 * What every store keeps of the presses that use a message's `once` buttons
 * (`metadata.interaction.uses`): one use per message, decided in the commit that stores the
 * press. The first press stored keeps it (and its runs); any other press of the message is
 * stored refused `used`, with no agent and no run; the same press stored again is the same
 * press. Called from the store contract.
 *
 * @example
 * ```ts
 * describeUseContract(() => store);
 * ```
 */
export function describeUseContract(store: () => ConversationStore): void {
  describe('presses that use a message', () => {
    /** Commits `ops` as capture does (through the log's calls for a store without a ledger). */
    const commit = async (ops: StoreOperation[]) => {
      const results = await commitWith(store(), capabilitiesOf(store()).ledger, ops);
      for (const result of results) expect(result.ok).toBe(true);
      return results.map((result) => (result.ok ? result.value : undefined));
    };
    /** A press with its pending run, as intake commits it. */
    const pressed = (press: NewMessage): StoreOperation[] => [
      { kind: 'append', message: press },
      { kind: 'run', run: runOf(press), create: true },
    ];
    const runsOf = async (press: NewMessage) =>
      (await store().getRuns?.({ messageId: press.id }))?.map((run) => run.status);
    const stored = async (press: NewMessage) =>
      (await store().getMessage(C, press.id))?.metadata.interaction;

    it('stores a second press of the message refused `used`, with no agent and no run', async () => {
      await commit([{ kind: 'append', message: REPLY }]);
      const [approve] = await commit(pressed(APPROVE));
      const [deny] = await commit(pressed(DENY));
      expect(approve).toMatchObject({ inserted: true, message: { metadata: APPROVE.metadata } });
      expect(deny).toMatchObject({
        inserted: true,
        message: { metadata: { interaction: { id: 'deny', refused: 'used' } } },
      });
      expect(await stored(APPROVE)).toEqual(APPROVE.metadata.interaction);
      const refused = (await store().getMessage(C, DENY.id))!;
      expect(refused.metadata.interaction).toEqual({
        type: 'button',
        id: 'deny',
        value: 'deny',
        on: '700',
        refused: 'used',
      });
      expect(refused.metadata.replyToMessageId).toBeUndefined();
      if (store().getRuns === undefined) return;
      expect(await runsOf(APPROVE)).toEqual(['pending']);
      expect(await runsOf(DENY)).toEqual([]);
    });

    it('decides between two presses in one commit: the first keeps the use', async () => {
      await commit([{ kind: 'append', message: REPLY }]);
      await commit([...pressed(DENY), ...pressed(APPROVE)]);
      expect(await stored(DENY)).toEqual(DENY.metadata.interaction);
      expect(await stored(APPROVE)).toMatchObject({ id: 'approve', refused: 'used' });
      expect(await stored(APPROVE)).not.toHaveProperty('agent');
      if (store().getRuns === undefined) return;
      expect(await runsOf(DENY)).toEqual(['pending']);
      expect(await runsOf(APPROVE)).toEqual([]);
    });

    it('keeps the use for the same press stored again, and creates no run for a refused one later', async () => {
      await commit([{ kind: 'append', message: REPLY }]);
      await commit(pressed(APPROVE));
      await commit(pressed(DENY));
      const [again] = await commit(pressed(APPROVE));
      const [denyAgain] = await commit(pressed(DENY));
      expect(again).toMatchObject({ inserted: false, message: { metadata: APPROVE.metadata } });
      expect(denyAgain).toMatchObject({
        inserted: false,
        message: { metadata: { interaction: { refused: 'used' } } },
      });
      if (store().getRuns === undefined) return;
      expect(await runsOf(APPROVE)).toEqual(['pending']);
      expect(await runsOf(DENY)).toEqual([]);
    });

    it('lets presses of other messages, and presses that use none, be answered', async () => {
      await commit([
        { kind: 'append', message: REPLY },
        { kind: 'append', message: OTHER_REPLY },
      ]);
      const more = press('more', 'telegram:88:p-more', {});
      const other = press('approve', 'telegram:88:p-other', { on: '701', uses: OTHER_REPLY.id });
      await commit([...pressed(APPROVE), ...pressed(more), ...pressed(other)]);
      expect(await stored(APPROVE)).toEqual(APPROVE.metadata.interaction);
      expect(await stored(more)).toEqual(more.metadata.interaction);
      expect(await stored(other)).toEqual(other.metadata.interaction);
    });
  });
}

const C = 'telegram:88';
const AGENT = 'billing';

const REPLY: NewMessage = {
  id: 'telegram:88:700',
  conversationId: C,
  participant: { kind: 'agent', id: AGENT },
  content: 'May I refund order 4242?',
  timestamp: '2026-01-01T00:00:00.000Z',
  scope: 'dm',
  metadata: {
    channelType: 'telegram',
    channelId: '88',
    messageId: '700',
    actions: [
      { id: 'approve', label: 'Approve' },
      { id: 'deny', label: 'Deny' },
    ],
  },
};

const OTHER_REPLY: NewMessage = {
  ...REPLY,
  id: 'telegram:88:701',
  timestamp: '2026-01-01T00:00:01.000Z',
  metadata: { ...REPLY.metadata, messageId: '701' },
};

/** A press of button `id` under `REPLY` (unless `interaction` says otherwise), answered. */
function press(id: string, pressId: string, interaction: { on?: string; uses?: string }) {
  const on = interaction.on ?? '700';
  const message: NewMessage = {
    id: pressId,
    conversationId: C,
    participant: { kind: 'user', id: 'telegram:1001', displayName: 'Ada' },
    content: id,
    timestamp: '2026-01-01T00:01:00.000Z',
    scope: 'dm',
    metadata: {
      channelType: 'telegram',
      channelId: '88',
      replyToMessageId: on,
      replyToParticipantId: AGENT,
      interaction: { type: 'button', id, value: id, on, agent: AGENT, ...interaction },
    },
  };
  return message;
}

const APPROVE = press('approve', 'telegram:88:p-approve', { uses: REPLY.id });
const DENY = press('deny', 'telegram:88:p-deny', { uses: REPLY.id });

function runOf(turn: NewMessage): AgentRun {
  return {
    id: `${turn.id}:${AGENT}`,
    messageId: turn.id,
    conversationId: C,
    agentId: AGENT,
    status: 'pending',
    createdAt: '2026-01-01T00:01:00.000Z',
    attempts: 0,
  };
}
