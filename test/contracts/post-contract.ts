import { describe, expect, it } from 'vitest';
import type { NewPost, PostQueue } from '../../src/posts.js';
import type { ConversationStore } from '../../src/store.js';

/**
 * What every store keeps of the posts the bot starts (`PostQueue`): stored pending, claimed
 * once due by one holder until the claim expires (or taken over), ended with a status. Called
 * from the store contract.
 *
 * @example
 * ```ts
 * describePostContract(() => store);
 * ```
 */
export function describePostContract(store: () => ConversationStore): void {
  describe('posts', () => {
    const queue = () => store() as ConversationStore & PostQueue;

    it('stores a post once, and reads it back pending with its message and author', async () => {
      const p1 = post('p1', -1000);
      await queue().schedulePost(p1);
      await queue().schedulePost({ ...p1, message: { content: 'changed' } });
      expect(await queue().getPosts()).toEqual([
        {
          ...p1,
          status: 'pending',
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      ]);
    });

    it('claims the posts due, oldest first, for one holder until the claim expires', async () => {
      await queue().schedulePost(post('later', 60_000));
      await queue().schedulePost(post('second', -1000));
      await queue().schedulePost(post('first', -2000));
      const claimed = await queue().claimDuePosts('a', 60_000);
      expect(claimed.map((p) => p.id)).toEqual(['first', 'second']);
      expect(claimed[0]).toMatchObject({ claimedBy: 'a', claimedUntil: expect.any(String) });
      expect(await queue().claimDuePosts('b', 60_000)).toEqual([]);
      expect(
        (await queue().claimDuePosts('b', 60_000, { takeOver: true })).map((p) => p.id),
      ).toEqual(['first', 'second']);
      expect(await queue().claimDuePosts('c', 60_000, { limit: 1 })).toEqual([]);
    });

    it('lets another holder claim a post whose claim expired', async () => {
      await queue().schedulePost(post('p1', -1000), { holder: 'a', ttlMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await queue().claimDuePosts('b', 60_000)).toMatchObject([
        { id: 'p1', claimedBy: 'b' },
      ]);
    });

    it("renews its holder's claims on pending posts, so an expired claim renewed stays its", async () => {
      await queue().schedulePost(post('slow', -1000), { holder: 'a', ttlMs: 1 });
      await queue().schedulePost(post('theirs', -1000), { holder: 'b', ttlMs: 60_000 });
      await queue().schedulePost(post('sent', -1000), { holder: 'a', ttlMs: 60_000 });
      await queue().finishPost('sent', 'sent');
      await new Promise((resolve) => setTimeout(resolve, 20)); // the claim on 'slow' expires

      expect(await queue().renewPostClaims('a', 60_000)).toBe(1);

      expect(await queue().claimDuePosts('c', 60_000)).toEqual([]);
      const claims = Object.fromEntries((await queue().getPosts()).map((p) => [p.id, p.claimedBy]));
      expect(claims).toEqual({ sent: undefined, slow: 'a', theirs: 'b' });
    });

    it('leaves a post stored claimed to its holder, and never claims an ended one', async () => {
      await queue().schedulePost(post('mine', -1000), { holder: 'a', ttlMs: 60_000 });
      await queue().schedulePost(post('done', -1000));
      await queue().finishPost('done', 'failed', 'chat not found');
      expect(await queue().claimDuePosts('b', 60_000)).toEqual([]);
      expect(await queue().getPosts({ statuses: ['failed'] })).toMatchObject([
        { id: 'done', status: 'failed', error: 'chat not found' },
      ]);
      await queue().finishPost('mine', 'sent');
      const [sent] = await queue().getPosts({ statuses: ['sent'] });
      expect(sent).toMatchObject({ id: 'mine', status: 'sent' });
      expect(sent).not.toHaveProperty('claimedBy');
    });
  });
}

function post(id: string, dueInMs: number): NewPost {
  return {
    id,
    conversationId: 'telegram:42',
    channelType: 'telegram',
    message: { content: `post ${id}`, visibleTo: '42' },
    participant: { kind: 'agent', id: 'telegram:99', displayName: 'Helper' },
    dueAt: new Date(Date.now() + dueInMs).toISOString(),
  };
}
