import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { concerns } from '../../src/agent.js';
import { describeAttachmentContract } from './attachment-contract.js';
import { describeForgetContract } from './forget-contract.js';
import { describePostContract } from './post-contract.js';
import { describeReactionContract } from './reaction-contract.js';
import { describeRunContract } from './run-contract.js';
import { describeUseContract } from './use-contract.js';
import type { ConversationStore, GetOptions } from '../../src/store.js';
import { defaultTokenizer } from '../../src/tokenizer.js';
import type { NewMessage, Participant, StoredMessage } from '../../src/types.js';

/**
 * The one contract every `ConversationStore` passes. Each test opens a fresh, empty store.
 *
 * Search semantics pinned here (both stores agree): a query is plain words — runs of
 * letters, digits and combining marks in the composed (NFC) text, lowercased, Latin
 * diacritics folded (`cafe` finds `café`), other marks kept (`हिंदी` is not `हद`),
 * everything else a separator and never syntax — and a turn matches when it contains ANY
 * of the words, whether it was stored composed or decomposed. Deleted turns (tombstones)
 * are not searchable.
 *
 * @example
 * ```ts
 * describeStoreContract('SqliteConversationStore', () => SqliteConversationStore.open(':memory:'));
 * ```
 */
export function describeStoreContract(
  name: string,
  open: () => Promise<ConversationStore> | ConversationStore,
  cleanup?: (store: ConversationStore) => Promise<void>,
): void {
  describe(`ConversationStore contract: ${name}`, () => {
    let store: ConversationStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      if (cleanup) await cleanup(store);
      else await store.close?.();
    });

    describe('append', () => {
      it('stores a turn once when the same id is appended twice', async () => {
        const message = turn();
        const first = await store.append(message);
        const second = await store.append({ ...message, content: 'changed' });
        expect(first.inserted).toBe(true);
        expect(second.inserted).toBe(false);
        expect(second.message.id).toBe(message.id);
        expect(second.message.sequence).toBe(first.message.sequence);
        expect(await store.get(C1)).toHaveLength(1);
        expect((await store.get(C1))[0]?.content).toBe(message.content);
      });

      it('stores a platform message once even under a new colloquy id', async () => {
        const message = turn({ messageId: 'p-1' });
        await store.append(message);
        const retry = await store.append({ ...message, id: 'another-id' });
        expect(retry.inserted).toBe(false);
        expect(retry.message.id).toBe(message.id);
        expect(await store.get(C1)).toHaveLength(1);
        expect((await store.getConversation(C1))?.messageCount).toBe(1);
      });

      it('keeps the same platform message id apart in different channels', async () => {
        await store.append(turn({ messageId: '7', channelId: 'a' }));
        const other = await store.append(turn({ messageId: '7', channelId: 'b' }));
        expect(other.inserted).toBe(true);
      });

      it('assigns an increasing sequence', async () => {
        const a = await store.append(turn());
        const b = await store.append(turn({ conversationId: C2 }));
        const c = await store.append(turn());
        expect(a.message.sequence).toBeTypeOf('number');
        expect(b.message.sequence!).toBeGreaterThan(a.message.sequence!);
        expect(c.message.sequence!).toBeGreaterThan(b.message.sequence!);
      });

      it('round-trips a turn with full metadata', async () => {
        const message: NewMessage = {
          id: 'slack:T1:C1:1700000000.000200',
          conversationId: C1,
          participant: { kind: 'user', id: 'slack:U1', displayName: 'Zoë 🌱' },
          content: 'Ship it 🚀 — naïve café <@U2>',
          timestamp: '2026-11-21T09:30:00.123Z',
          scope: 'thread',
          metadata: {
            channelType: 'slack',
            channelName: 'general',
            channelId: 'C1',
            threadId: '1700000000.000100',
            messageId: '1700000000.000200',
            partMessageIds: ['1700000000.000300'],
            mentions: ['slack:U2'],
            replyToMessageId: '1700000000.000100',
            replyToParticipantId: 'slack:U2',
            toolCallId: 'call_1',
            toolName: 'lookup',
            custom: { nested: [1, 'two', { three: true }], nothing: null },
          },
        };
        await store.append(message);
        const [stored] = await store.get(C1);
        const { sequence, ...rest } = stored!;
        expect(sequence).toBeTypeOf('number');
        expect(rest).toEqual(message);
      });

      it('accepts the documented minimal turn and reads it back unchanged', async () => {
        // given a turn with every optional field left out (no mentions, no platform ids)
        const minimal: NewMessage = {
          id: 'minimal-1',
          conversationId: C1,
          participant: { kind: 'user', id: 'telegram:1001' },
          content: 'just the required fields',
          timestamp: at(5),
          scope: 'channel',
          metadata: { channelType: 'telegram', channelId: '42' },
        };
        // when it is stored and read every way an agent reads
        const appended = await store.append(minimal);
        const [plain] = await store.get(C1);
        const addressed = await store.get(C1, { concerning: { aliases: ['telegram:1001'] } });
        const others = await store.get(C1, { concerning: { aliases: ['support-agent'] } });
        // then it is the same turn, plus the sequence the store gave it
        expect(appended.inserted).toBe(true);
        const { sequence, ...rest } = plain!;
        expect(sequence).toBeTypeOf('number');
        expect(rest).toEqual(minimal);
        expect(rest.metadata).not.toHaveProperty('mentions');
        expect(addressed.map((m) => m.id)).toEqual(['minimal-1']);
        expect(others).toEqual([]);
        expect((await store.search(C1, 'required')).map((m) => m.id)).toEqual(['minimal-1']);
        expect((await store.append(minimal)).inserted).toBe(false);
      });

      it('accepts a turn with no metadata at all, with its channel taken from the id', async () => {
        const bare = {
          id: 'bare-1',
          conversationId: C1,
          participant: { kind: 'user', id: 'telegram:1001' },
          content: 'no metadata',
          timestamp: at(1),
          scope: 'dm',
        } as unknown as NewMessage;
        await store.append(bare);
        const [stored] = await store.get(C1, { concerning: { aliases: ['support-agent'] } });
        expect(stored?.content).toBe('no metadata');
        expect(stored?.metadata).toEqual({ channelType: 'telegram', channelId: C1 });
        expect((await store.getConversation(C1))?.channelType).toBe('telegram');
      });

      it.each([
        ['only a channel type', { channelType: 'slack' }, { channelType: 'slack', channelId: C1 }],
        [
          'only mentions',
          { mentions: ['telegram:99'] },
          { channelType: 'telegram', channelId: C1, mentions: ['telegram:99'] },
        ],
        ['empty metadata', {}, { channelType: 'telegram', channelId: C1 }],
      ])('accepts a turn with %s, filling in where it was posted', async (_, given, stored) => {
        // given a turn whose metadata leaves out fields the store needs
        const partial = { ...turn({ id: 'partial-1' }), metadata: given } as NewMessage;
        // when it is appended and read back
        const appended = await store.append(partial);
        const [read] = await store.get(C1);
        // then it is stored with the documented defaults, and only once
        expect(appended.inserted).toBe(true);
        expect(read?.metadata).toEqual(stored);
        expect(appended.message.metadata).toEqual(stored);
        expect((await store.append(partial)).inserted).toBe(false);
        expect(await store.get(C1, { concerning: { aliases: ['telegram:99'] } })).toHaveLength(
          'mentions' in given ? 1 : 0,
        );
      });

      it.each([
        ['no participant', { participant: null }],
        ['a participant without an id', { participant: { kind: 'user' } }],
        ['a participant of an unknown kind', { participant: { kind: 'robot', id: 'r1' } }],
      ])('refuses a turn with %s in one line, storing nothing', async (_, change) => {
        // given a turn no prompt could be assembled from
        const bad = { ...turn({ id: 'bad-1' }), ...change } as unknown as NewMessage;
        // when it is appended, then the store says why in one line and keeps nothing
        const refusal = await store.append(bad).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refusal).toBeInstanceOf(Error);
        expect((refusal as Error).message).toMatch(/participant/);
        expect((refusal as Error).message).not.toContain('\n');
        expect(await store.get(C1)).toEqual([]);
        expect(await store.getConversation(C1)).toBeUndefined();
      });

      it('round-trips a 1 MB turn', async () => {
        const content = 'x'.repeat(1024 * 1024 - 3) + 'end';
        await store.append(turn({ content }));
        expect((await store.get(C1))[0]?.content).toBe(content);
      });
    });

    describe('get', () => {
      it('orders and filters timestamps with offsets by the instant they name', async () => {
        // given 13:30 at +01:00 (12:30Z), which sorts after 12:45Z as text
        await store.append(turn({ id: 'early', timestamp: '2026-01-01T13:30:00.000+01:00' }));
        await store.append(turn({ id: 'late', timestamp: '2026-01-01T12:45:00.000Z' }));
        // then it is read as the earlier turn everywhere
        expect((await store.get(C1)).map((m) => m.id)).toEqual(['early', 'late']);
        expect((await store.get(C1))[0]?.timestamp).toBe('2026-01-01T12:30:00.000Z');
        expect((await store.get(C1, { limit: 1 })).map((m) => m.id)).toEqual(['late']);
        const since = await store.get(C1, { sinceTimestamp: '2026-01-01T13:40:00+01:00' });
        expect(since.map((m) => m.id)).toEqual(['late']);
        const before = await store.get(C1, { before: '2026-01-01T13:40:00+01:00' });
        expect(before.map((m) => m.id)).toEqual(['early']);
      });

      it('returns the most recent `limit` turns, oldest first', async () => {
        for (let i = 0; i < 10; i++)
          await store.append(turn({ timestamp: at(i), content: `m${i}` }));
        const recent = await store.get(C1, { limit: 3 });
        expect(recent.map((m) => m.content)).toEqual(['m7', 'm8', 'm9']);
      });

      it('returns 100 turns by default', async () => {
        for (let i = 0; i < 120; i++) await store.append(turn({ timestamp: at(i) }));
        expect(await store.get(C1)).toHaveLength(100);
      });

      it('orders by timestamp, then by insertion', async () => {
        await store.append(turn({ timestamp: at(3), content: 'late' }));
        await store.append(turn({ timestamp: at(1), content: 'early' }));
        await store.append(turn({ timestamp: at(2), content: 'tie-first' }));
        await store.append(turn({ timestamp: at(2), content: 'tie-second' }));
        const all = await store.get(C1);
        expect(all.map((m) => m.content)).toEqual(['early', 'tie-first', 'tie-second', 'late']);
      });

      it('returns nothing for an unknown conversation and stays within its own', async () => {
        await store.append(turn({ conversationId: C2 }));
        expect(await store.get(C1)).toEqual([]);
      });

      it('filters by time: sinceTimestamp inclusive, before exclusive', async () => {
        for (let i = 0; i < 6; i++)
          await store.append(turn({ timestamp: at(i), content: `m${i}` }));
        const window = await store.get(C1, { sinceTimestamp: at(2), before: at(4) });
        expect(window.map((m) => m.content)).toEqual(['m2', 'm3']);
      });

      it('filters by scope and by participant', async () => {
        await store.append(turn({ scope: 'thread', participant: bob }));
        await store.append(turn({ scope: 'channel', participant: alice }));
        await store.append(turn({ scope: 'channel', participant: bob }));
        expect(await store.get(C1, { scope: 'thread' })).toHaveLength(1);
        const bobs = await store.get(C1, { participantIds: [bob.id] });
        expect(bobs.map((m) => m.participant.id)).toEqual([bob.id, bob.id]);
        expect(await store.get(C1, { scope: 'channel', participantIds: [bob.id] })).toHaveLength(1);
      });

      it('reads the newest turns of several authors, people and agents, in order', async () => {
        const all: NewMessage[] = [];
        for (let i = 0; i < 30; i++) {
          const participant = [alice, bob, agent, otherAgent][i % 4]!;
          all.push(turn({ timestamp: at(i), participant }));
          await store.append(all[i]!);
        }
        const wanted = (ids: string[], limit: number) =>
          all
            .filter((m) => ids.includes(m.participant.id))
            .slice(-limit)
            .map((m) => m.id);
        for (const ids of [[alice.id, agent.id], [agent.id], [bob.id, bob.id], []]) {
          const found = await store.get(C1, { participantIds: ids, limit: 5 });
          expect(found.map((m) => m.id)).toEqual(wanted(ids, 5));
        }
      });

      it('reads by hundreds of authors or aliases as by a few', async () => {
        // given turns by people, one mentioning an alias, one replying to another
        const people = Array.from({ length: 6 }, (_, i) => `telegram:${2000 + i}`);
        const all: NewMessage[] = [];
        for (const [i, id] of people.entries()) {
          const mentions = i === 1 ? [people[5]!] : undefined;
          const replyToParticipantId = i === 2 ? people[4]! : undefined;
          all.push(
            turn({
              timestamp: at(i),
              participant: { kind: 'user', id },
              ...(mentions && { mentions }),
              ...(replyToParticipantId && { replyToParticipantId }),
            }),
          );
          await store.append(all[i]!);
        }
        // when asked with 300 ids, a few of them real
        const many = (...real: string[]) => [
          ...Array.from({ length: 297 }, (_, i) => `nobody-${i}`),
          ...real,
        ];
        const byAuthor = await store.get(C1, { participantIds: many(people[0]!, people[3]!) });
        const aliases = many(people[0]!, people[4]!, people[5]!);
        const concerning = await store.get(C1, { concerning: { aliases } });
        // then the same turns come back as with the ids alone
        expect(byAuthor.map((m) => m.id)).toEqual([all[0]!.id, all[3]!.id]);
        expect(concerning.map((m) => m.id)).toEqual(
          all.filter((m) => concerns(m, aliases)).map((m) => m.id),
        );
        expect(concerning.map((m) => m.id)).toEqual([
          all[0]!.id,
          all[1]!.id,
          all[2]!.id,
          all[4]!.id,
          all[5]!.id,
        ]);
      });

      it('keeps exactly the turns that concern an agent, by the same rule as concerns()', async () => {
        const aliases = [agent.id, 'slack:UBOT'];
        const variants: Partial<TurnFields>[] = [
          {},
          { participant: agent },
          { participant: { kind: 'agent', id: 'slack:UBOT' } },
          { mentions: ['slack:UBOT'] },
          { mentions: ['slack:UOTHER'] },
          { replyToParticipantId: agent.id },
          { replyToParticipantId: bob.id },
          { participant: otherAgent, mentions: [bob.id] },
          { mentions: ['SLACK:UBOT'] },
        ];
        const all: NewMessage[] = [];
        for (const [i, variant] of variants.entries()) {
          const message = turn({ timestamp: at(i), ...variant });
          all.push(message);
          await store.append(message);
        }
        const dm = turn({ conversationId: C2, scope: 'dm' });
        await store.append(dm);

        const found = await store.get(C1, { concerning: { aliases } });
        expect(found.map((m) => m.id)).toEqual(
          all.filter((m) => concerns(m, aliases)).map((m) => m.id),
        );
        expect(await store.get(C2, { concerning: { aliases } })).toHaveLength(1);
        // every turn of a DM concerns the agent, with the other options as they are
        await store.append(turn({ conversationId: C2, scope: 'dm', participant: agent }));
        await store.append(turn({ conversationId: C2, scope: 'dm', participant: bob }));
        const whole = (await store.get(C2, { limit: 2 })).map((m) => m.id);
        const concerning = await store.get(C2, { concerning: { aliases: ['nobody'] }, limit: 2 });
        expect(concerning.map((m) => m.id)).toEqual(whole);
      });

      it('finds the turns an alias wrote, whatever kind its author is or was', async () => {
        // given a person named as an alias, and an author who wrote first as a person and
        // later as an agent (a bot user seen before its kind was known)
        const bot = { kind: 'user' as const, id: 'telegram:99', displayName: 'Orders' };
        const early = turn({ timestamp: at(1), participant: bot, content: 'early' });
        const person = turn({ timestamp: at(2), participant: alice, content: 'by alice' });
        const later = turn({ timestamp: at(3), participant: { ...bot, kind: 'agent' } });
        const noise = turn({ timestamp: at(4), participant: bob });
        for (const message of [early, person, later, noise]) await store.append(message);

        // when each is asked for as an alias
        const asAlias = async (alias: string) =>
          (await store.get(C1, { concerning: { aliases: [alias] } })).map((m) => m.id);

        // then every turn it wrote is found, in order, and nothing else
        expect(await asAlias(alice.id)).toEqual([person.id]);
        expect(await asAlias(bot.id)).toEqual([early.id, later.id]);
      });

      it('finds an agent’s last exchanges in a busy channel', async () => {
        const aliases = [agent.id, 'telegram:99'];
        const all: NewMessage[] = [];
        for (let i = 0; i < 500; i++) {
          const message =
            i % 50 === 48
              ? turn({ timestamp: at(i), mentions: ['telegram:99'], content: `ask ${i}` })
              : i % 50 === 49
                ? turn({ timestamp: at(i), participant: agent, replyToParticipantId: bob.id })
                : turn({ timestamp: at(i), participant: i % 2 ? alice : bob });
          all.push(message);
          await store.append(message);
        }
        const found = await store.get(C1, { concerning: { aliases }, limit: 5 });
        const expected = all.filter((m) => concerns(m, aliases)).slice(-5);
        expect(found.map((m) => m.id)).toEqual(expected.map((m) => m.id));
        expect(found.map((m) => m.content)).toContain('ask 498');
      });

      it('reads the turns replying to one message of one participant, and no other', async () => {
        // given replies to two of the agent's messages and to Bob's message of the same id
        const to = (participantId: string, messageId: string, seconds: number) =>
          turn({
            timestamp: at(seconds),
            replyToParticipantId: participantId,
            replyToMessageId: messageId,
          });
        const before = to(agent.id, 'm-1', 1);
        const first = to(agent.id, 'm-1', 2);
        const others = [to(agent.id, 'm-2', 3), to(bob.id, 'm-1', 4), turn({ timestamp: at(5) })];
        const last = { ...to(agent.id, 'm-1', 6), participant: bob };
        for (const message of [before, first, ...others, last]) await store.append(message);

        // when the replies to the agent's m-1 are asked for
        const replyTo = { participantId: agent.id, messageId: 'm-1' };
        const read = async (options: GetOptions) =>
          (await store.get(C1, { replyTo, ...options })).map((m) => m.id);

        // then they alone are read, oldest first, within the time and the limit asked
        expect(await read({})).toEqual([before.id, first.id, last.id]);
        expect(await read({ sinceTimestamp: at(2) })).toEqual([first.id, last.id]);
        expect(await read({ limit: 1 })).toEqual([last.id]);
      });

      it('leaves summaries out unless asked', async () => {
        await store.append(turn({ timestamp: at(1) }));
        await store.append(summary(agent.id, at(2)));
        expect(await store.get(C1)).toHaveLength(1);
        expect(await store.get(C1, { includeSummaries: true })).toHaveLength(2);
      });
    });

    describe('getMessage', () => {
      it('reads one turn by id, only within its own conversation', async () => {
        if (store.getMessage === undefined) return; // optional: callers fall back to get
        const here = turn({ content: 'the one I want' });
        await store.append(here);
        await store.append(turn({ id: 'elsewhere', conversationId: C2 }));
        expect(await store.getMessage(C1, here.id)).toMatchObject({
          id: here.id,
          content: 'the one I want',
          participant: alice,
        });
        expect(await store.getMessage(C1, 'elsewhere')).toBeUndefined();
        expect(await store.getMessage(C2, here.id)).toBeUndefined();
        expect(await store.getMessage(C1, 'never-stored')).toBeUndefined();
      });
    });

    describe('findMessage', () => {
      const ref = (messageId: string) => ({ channelType: 'telegram', channelId: '42', messageId });

      it('finds a turn by its platform message, in its own conversation only', async () => {
        const asked = turn({ participant: agent, messageId: 'p-1', content: 'May I?' });
        await store.append(asked);
        for (const id of ['p-2', 'p-3']) await store.append(turn({ messageId: id }));
        expect(await store.findMessage(C1, ref('p-1'))).toMatchObject({
          id: asked.id,
          content: 'May I?',
        });
        expect(await store.findMessage(C2, ref('p-1'))).toBeUndefined();
        expect(await store.findMessage(C1, ref('p-never'))).toBeUndefined();
      });

      it('finds a reply by any part the platform confirmed it in', async () => {
        if (store.commit === undefined) return;
        const reply = turn({ participant: agent, content: 'a long answer' });
        await store.commit([{ kind: 'reply', message: reply }]);
        const messageIds = ['p-1', 'p-2', 'p-3'];
        const confirmation = {
          id: reply.id,
          conversationId: C1,
          messageIds,
          delivery: 'sent' as const,
        };
        await store.commit([{ kind: 'confirm', confirmation }]);
        await store.append(turn({ messageId: 'p-4', content: 'mentions p-3' }));
        for (const id of messageIds) {
          expect((await store.findMessage(C1, ref(id)))?.id).toBe(reply.id);
        }
        expect(await store.findMessage(C2, ref('p-3'))).toBeUndefined();
      });
    });

    describe('search', () => {
      it('finds turns in one conversation only', async () => {
        await store.append(turn({ content: 'the invoice is late' }));
        await store.append(turn({ conversationId: C2, content: 'another invoice' }));
        const found = await store.search(C1, 'invoice');
        expect(found.map((m) => m.conversationId)).toEqual([C1]);
      });

      it('matches any of the words and ranks the turn with all of them first', async () => {
        await seedFiller(store);
        const both = await store.append(turn({ content: 'deploy the build' }));
        await store.append(turn({ content: 'deploy now' }));
        await store.append(turn({ content: 'build it' }));
        const found = await store.search(C1, 'deploy build');
        expect(found).toHaveLength(3);
        expect(found[0]?.id).toBe(both.message.id);
      });

      it('finds a turn that contains model special-token text, and caps it by tokens', async () => {
        const odd = await store.append(turn({ content: 'my name is <|endoftext|> invoice' }));
        const found = await store.search(C1, 'invoice <|im_start|>', { tokenCap: 3 });
        expect(found.map((m) => m.id)).toEqual([odd.message.id]);
        expect(defaultTokenizer.count(found[0]?.content ?? '')).toBeLessThanOrEqual(3);
      });

      it('ranks a turn that repeats the word above one that says it once', async () => {
        await seedFiller(store);
        await store.append(turn({ content: 'refund for the order', timestamp: at(1) }));
        const twice = await store.append(turn({ content: 'refund the refund', timestamp: at(0) }));
        const found = await store.search(C1, 'refund');
        expect(found[0]?.id).toBe(twice.message.id);
      });

      it.each([
        ['"unbalanced'],
        ['AND OR NOT'],
        ['foo*'],
        ['NEAR(a b)'],
        ['%'],
        ['_'],
        ["'; DROP TABLE messages; --"],
        ['column:foo'],
        ['^start'],
        ['-drill +table'],
        ['a) OR (b'],
        ['\\ \0 {} [] $'],
      ])('treats %j as plain words', async (query) => {
        const corpus = [
          'unbalanced books',
          'salt and pepper',
          'this is not a drill',
          'foo fighters',
          'foobar is not foo-ish',
          'near a b c',
          'drop the table please',
          'messages column start',
          '100% sure',
          'snake_case',
        ];
        for (const content of corpus) await store.append(turn({ content }));
        const found = await store.search(C1, query, { limit: 100, tokenCap: 100_000 });
        const wanted = new Set(words(query));
        const expected = corpus.filter((c) => words(c).some((w) => wanted.has(w)));
        expect(found.map((m) => m.content).sort()).toEqual(expected.sort());
        expect(await store.get(C1)).toHaveLength(corpus.length);
      });

      it('returns nothing for an empty or punctuation-only query', async () => {
        await store.append(turn({ content: 'hello world' }));
        for (const query of ['', '   ', '?!', '***', '"', '🎉']) {
          expect(await store.search(C1, query)).toEqual([]);
        }
      });

      it('returns 10 results by default', async () => {
        for (let i = 0; i < 15; i++) await store.append(turn({ content: `ticket ${i}` }));
        expect(await store.search(C1, 'ticket')).toHaveLength(10);
        expect(await store.search(C1, 'ticket', { limit: 3 })).toHaveLength(3);
      });

      it('keeps the results within the token cap, cutting lower-ranked ones first', async () => {
        for (let i = 0; i < 8; i++) {
          await store.append(turn({ content: `alpha ${'filler words here '.repeat(10)}${i}` }));
        }
        const uncapped = await store.search(C1, 'alpha', { tokenCap: 100_000 });
        const each = defaultTokenizer.count(uncapped[0]!.content);
        const capped = await store.search(C1, 'alpha', { tokenCap: each * 3 + 1 });
        expect(tokens(capped)).toBeLessThanOrEqual(each * 3 + 1);
        expect(capped.length).toBeGreaterThanOrEqual(1);
        expect(capped[0]?.id).toBe(uncapped[0]?.id);
        const order = uncapped.map((m) => m.id);
        const positions = capped.map((m) => order.indexOf(m.id));
        expect(positions).toEqual([...positions].sort((a, b) => a - b));
      });

      it('truncates the first result to the cap when it alone is too long', async () => {
        const content = `needle ${'haystack '.repeat(2000)}`;
        await store.append(turn({ content }));
        const [only, ...rest] = await store.search(C1, 'needle', { tokenCap: 50 });
        expect(rest).toEqual([]);
        expect(defaultTokenizer.count(only!.content)).toBeLessThanOrEqual(50);
        expect(content.startsWith(only!.content)).toBe(true);
        expect(only!.content.length).toBeGreaterThan(0);
      });

      it('folds case and diacritics, and keeps emoji content intact', async () => {
        await store.append(turn({ content: 'Meet at the Café 🎉' }));
        await store.append(turn({ content: 'a naive question' }));
        expect((await store.search(C1, 'cafe'))[0]?.content).toBe('Meet at the Café 🎉');
        expect(await store.search(C1, 'CAFÉ')).toHaveLength(1);
        expect(await store.search(C1, 'naïve')).toHaveLength(1);
      });

      it.each([
        ['Korean', '한국어', '저는 한국어를 배워요 한국어 좋아요'],
        ['Hindi', 'हिंदी', 'मुझे हिंदी पसंद है'],
        ['Arabic, with vowel marks', 'مَرْحَبًا', 'مَرْحَبًا بِكُمْ'],
      ])('finds a word in %s by its exact spelling', async (_script, word, content) => {
        await store.append(turn({ content: 'hello world' }));
        const written = await store.append(turn({ content }));
        expect((await store.search(C1, word)).map((m) => m.id)).toEqual([written.message.id]);
      });

      it('does not find a word by its consonants alone when its vowel signs differ', async () => {
        await store.append(turn({ content: 'मुझे हिंदी पसंद है' }));
        expect(await store.search(C1, 'हद')).toEqual([]);
      });

      it('finds text stored decomposed (NFD) by a composed query, and the reverse', async () => {
        const cafe = await store.append(turn({ content: 'Meet at the Café'.normalize('NFD') }));
        const korean = await store.append(turn({ content: '한국어 수업'.normalize('NFD') }));
        const composed = await store.append(turn({ content: '오늘 한국어 수업' }));
        expect((await store.search(C1, 'café')).map((m) => m.id)).toEqual([cafe.message.id]);
        expect((await store.search(C1, 'cafe')).map((m) => m.id)).toEqual([cafe.message.id]);
        const found = await store.search(C1, '한국어');
        expect(found.map((m) => m.id).sort()).toEqual(
          [korean.message.id, composed.message.id].sort(),
        );
        const reverse = await store.search(C1, '한국어'.normalize('NFD'));
        expect(reverse.map((m) => m.id).sort()).toEqual(
          [korean.message.id, composed.message.id].sort(),
        );
        const stored = (await store.get(C1)).find((m) => m.id === korean.message.id);
        expect(stored?.content).toBe('한국어 수업'.normalize('NFD'));
      });

      it('does not find summaries', async () => {
        await store.append(summary(agent.id, at(1), 'the customer wants a refund'));
        expect(await store.search(C1, 'refund')).toEqual([]);
      });

      it('does not find deleted turns', async () => {
        await store.append(turn({ messageId: 'p1', content: 'secret plan' }));
        await store.recordDeletion({ ...ref('p1'), deletedAt: at(5) });
        expect(await store.search(C1, 'plan')).toEqual([]);
      });
    });

    describe('deleteMessages', () => {
      it('deletes only within the given conversation and counts what went', async () => {
        const a = await store.append(turn());
        const b = await store.append(turn());
        const elsewhere = await store.append(turn({ conversationId: C2 }));
        const ids = [a.message.id, elsewhere.message.id, 'unknown'];
        expect(await store.deleteMessages(C1, ids)).toBe(1);
        expect((await store.get(C1)).map((m) => m.id)).toEqual([b.message.id]);
        expect(await store.get(C2)).toHaveLength(1);
        expect((await store.getConversation(C1))?.messageCount).toBe(1);
      });

      it('does nothing for an empty list', async () => {
        await store.append(turn());
        expect(await store.deleteMessages(C1, [])).toBe(0);
        expect(await store.get(C1)).toHaveLength(1);
      });

      it('counts a new turn once when its commit drops a refused reply of its conversation', async () => {
        // A store without a run ledger keeps no outbox: no reply is recorded before it is sent.
        if (store.commit === undefined) return expect(store.getRuns).toBeUndefined();
        const refused = (id: string) => ({
          kind: 'confirm' as const,
          confirmation: { id, conversationId: C1, messageIds: [], delivery: 'failed' as const },
        });
        await store.append(turn({ timestamp: at(1) }));
        const early = turn({ participant: agent, timestamp: at(9) });
        await store.commit([{ kind: 'reply', message: early }]);
        const late = turn({ participant: agent, timestamp: at(8) });
        const results = await store.commit([
          { kind: 'append', message: turn({ timestamp: at(3) }) },
          refused(early.id),
          { kind: 'reply', message: late },
          { kind: 'append', message: turn({ timestamp: at(4) }) },
          refused(late.id),
        ]);
        expect(results.map((result) => result.ok)).toEqual([true, true, true, true, true]);
        const turns = await store.get(C1);
        expect(turns.map((m) => m.timestamp)).toEqual([at(1), at(3), at(4)]);
        expect(await store.getConversation(C1)).toMatchObject({
          messageCount: 3,
          firstMessageAt: at(1),
          lastMessageAt: at(4),
        });
      });
    });

    describe('conversations', () => {
      it('describes a conversation, or undefined when unknown', async () => {
        const first = { channelName: 'general', threadId: 't1', scope: 'thread' as const };
        await store.append(turn({ ...first, timestamp: at(5) }));
        await store.append(turn({ ...first, timestamp: at(1) }));
        await store.append(turn({ ...first, timestamp: at(3) }));
        expect(await store.getConversation(C1)).toEqual({
          id: C1,
          channelType: 'telegram',
          channelId: '42',
          channelName: 'general',
          threadId: 't1',
          scope: 'thread',
          messageCount: 3,
          firstMessageAt: at(1),
          lastMessageAt: at(5),
        });
        expect(await store.getConversation('nope')).toBeUndefined();
      });

      it('moves the conversation’s times with a reply confirmed at the platform’s time', async () => {
        if (store.commit === undefined) return expect(store.getRuns).toBeUndefined();
        await store.append(turn({ timestamp: at(1) }));
        const reply = turn({ participant: agent, content: 'refunds', timestamp: at(2) });
        await store.commit([{ kind: 'reply', message: reply }]);
        const commit = store.commit.bind(store);
        const confirm = (seconds: number) =>
          commit([
            {
              kind: 'confirm',
              confirmation: {
                id: reply.id,
                conversationId: C1,
                messageIds: ['p1'],
                delivery: 'sent',
                timestamp: at(seconds),
              },
            },
          ]);
        await confirm(9);
        expect(await store.getConversation(C1)).toMatchObject({
          firstMessageAt: at(1),
          lastMessageAt: at(9),
        });
        // The newest turn moving earlier leaves the conversation spanning the turns that stand.
        await confirm(0);
        expect(await store.getConversation(C1)).toMatchObject({
          firstMessageAt: at(0),
          lastMessageAt: at(1),
        });
      });

      it('lists the most recently active first, with message counts', async () => {
        await store.append(turn({ conversationId: 'c-old', timestamp: at(1) }));
        await store.append(turn({ conversationId: 'c-new', timestamp: at(2) }));
        await store.append(turn({ conversationId: 'c-old', timestamp: at(3) }));
        await store.append(turn({ conversationId: 'c-old', timestamp: at(0) }));
        const page = await store.listConversations();
        expect(page.items.map((c) => [c.id, c.messageCount])).toEqual([
          ['c-old', 3],
          ['c-new', 1],
        ]);
        expect(page.nextCursor).toBeUndefined();
      });

      it('filters by channel type and by participant', async () => {
        await store.append(turn({ conversationId: 'tg', participant: alice }));
        await store.append(turn({ conversationId: 'sl', channelType: 'slack', participant: bob }));
        await store.append(
          turn({ conversationId: 'sl2', channelType: 'slack', participant: alice }),
        );
        const slack = await store.listConversations({ channelType: 'slack' });
        expect(slack.items.map((c) => c.id).sort()).toEqual(['sl', 'sl2']);
        const alices = await store.listConversations({ participantId: alice.id });
        expect(alices.items.map((c) => c.id).sort()).toEqual(['sl2', 'tg']);
        const both = await store.listConversations({ channelType: 'slack', participantId: bob.id });
        expect(both.items.map((c) => c.id)).toEqual(['sl']);
      });

      it('stops listing a conversation under a participant once their turns there are deleted', async () => {
        const mine = turn({ conversationId: 'tg', participant: alice });
        await store.append(mine);
        await store.append(turn({ conversationId: 'tg', participant: bob }));
        await store.append(turn({ conversationId: 'tg2', participant: alice }));
        await store.deleteMessages('tg', [mine.id]);
        const alices = await store.listConversations({ participantId: alice.id });
        expect(alices.items.map((c) => c.id)).toEqual(['tg2']);
        const bobs = await store.listConversations({ participantId: bob.id });
        expect(bobs.items.map((c) => c.id)).toEqual(['tg']);
      });

      it('pages through every conversation exactly once, ties included', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 11; i++) {
          ids.push(`c${i}`);
          await store.append(turn({ conversationId: `c${i}`, timestamp: at(Math.floor(i / 3)) }));
        }
        const seen: string[] = [];
        const lasts: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.listConversations({ limit: 3, cursor });
          expect(page.items.length).toBeLessThanOrEqual(3);
          seen.push(...page.items.map((c) => c.id));
          lasts.push(...page.items.map((c) => c.lastMessageAt));
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== undefined && pages < 20);
        // ties (the same last activity) in the same order in every store: by id, from the end
        expect(seen.slice(0, 2)).toEqual(['c9', 'c10']);
        expect(seen.slice().sort()).toEqual(ids.slice().sort());
        expect(new Set(seen).size).toBe(ids.length);
        expect(lasts).toEqual(lasts.slice().sort().reverse());
        expect(pages).toBeLessThanOrEqual(5);
      });

      it('deletes a conversation with all its turns', async () => {
        await store.append(turn({ content: 'gone soon' }));
        await store.append(turn({ conversationId: C2 }));
        expect(await store.deleteConversation(C1)).toBe(true);
        expect(await store.deleteConversation(C1)).toBe(false);
        expect(await store.get(C1)).toEqual([]);
        expect(await store.search(C1, 'gone')).toEqual([]);
        expect(await store.getConversation(C1)).toBeUndefined();
        expect((await store.listConversations()).items.map((c) => c.id)).toEqual([C2]);
      });
    });

    describe('conversations as objects', () => {
      /** The optional members, which every store colloquy ships has. */
      function managed() {
        const { createConversation, updateConversation } = store;
        if (createConversation === undefined || updateConversation === undefined) {
          throw new Error('the store has no createConversation / updateConversation');
        }
        return {
          create: createConversation.bind(store),
          update: updateConversation.bind(store),
        };
      }

      it('creates an empty conversation with a title and metadata, once', async () => {
        // given a conversation created before any turn
        const { create } = managed();
        const metadata = { ticket: 42, tags: ['refund', 'vip'], owner: { team: 'billing' } };
        const created = await create({ id: 'support:ticket-42', title: 'Refund', metadata });

        // then it is described, listed and counted as empty, placed by its id
        const expected = {
          id: 'support:ticket-42',
          channelType: 'support',
          channelId: 'support:ticket-42',
          scope: 'channel',
          messageCount: 0,
          title: 'Refund',
          metadata,
        };
        expect(created).toMatchObject(expected);
        expect(created.firstMessageAt).toBe(created.lastMessageAt);
        expect(await store.getConversation('support:ticket-42')).toEqual(created);
        expect((await store.listConversations()).items).toEqual([created]);
        // and the id cannot be created twice
        await expect(create({ id: 'support:ticket-42' })).rejects.toThrow(/support:ticket-42/);
      });

      it('lets the turns appended later join it, spanning them, keeping its title', async () => {
        const { create } = managed();
        await create({ id: C1, title: 'Orders', channelType: 'telegram', channelId: '42' });
        await store.append(turn({ timestamp: at(7) }));
        await store.append(turn({ timestamp: at(3) }));
        expect(await store.getConversation(C1)).toMatchObject({
          title: 'Orders',
          channelType: 'telegram',
          channelId: '42',
          messageCount: 2,
          firstMessageAt: at(3),
          lastMessageAt: at(7),
        });
      });

      it('sets, keeps and clears the title and metadata of any conversation', async () => {
        const { update } = managed();
        await store.append(turn());
        expect(await store.getConversation(C1)).not.toHaveProperty('title');
        expect(await store.getConversation(C1)).not.toHaveProperty('metadata');

        const titled = await update(C1, { title: 'Late order', metadata: { priority: 'high' } });
        expect(titled).toMatchObject({ title: 'Late order', metadata: { priority: 'high' } });
        // a field left out stays, null clears it
        expect(await update(C1, { metadata: { priority: 'low' } })).toMatchObject({
          title: 'Late order',
          metadata: { priority: 'low' },
        });
        const cleared = await update(C1, { title: null, metadata: null });
        expect(cleared).not.toHaveProperty('title');
        expect(cleared).not.toHaveProperty('metadata');
        expect(await store.getConversation(C1)).toEqual(cleared);
        expect(await update('nope', { title: 'x' })).toBeUndefined();
      });

      it('lists the conversations an agent took part in', async () => {
        await store.append(turn({ conversationId: 'answered', participant: agent }));
        await store.append(turn({ conversationId: 'mentioned', mentions: [agent.id] }));
        await store.append(turn({ conversationId: 'other', participant: otherAgent }));
        const page = await store.listConversations({ agentId: agent.id });
        expect(page.items.map((c) => c.id)).toEqual(['answered']);
        const both = await store.listConversations({ agentId: agent.id, participantId: alice.id });
        expect(both.items).toEqual([]);
      });

      it('pages by offset as well as by cursor, in the same order', async () => {
        for (let i = 0; i < 7; i++) {
          await store.append(turn({ conversationId: `c${i}`, timestamp: at(Math.floor(i / 2)) }));
        }
        const all = (await store.listConversations()).items.map((c) => c.id);
        const pages: string[][] = [];
        for (let offset = 0; offset < 9; offset += 3) {
          const page = await store.listConversations({ limit: 3, offset });
          pages.push(page.items.map((c) => c.id));
          expect(page.nextCursor !== undefined).toBe(offset + 3 < 7);
        }
        expect(pages).toEqual([all.slice(0, 3), all.slice(3, 6), all.slice(6)]);
        expect((await store.listConversations({ offset: 7 })).items).toEqual([]);
        // after a cursor, the offset counts from the cursor
        const first = await store.listConversations({ limit: 2 });
        const skipped = await store.listConversations({ cursor: first.nextCursor, offset: 1 });
        expect(skipped.items.map((c) => c.id)).toEqual(all.slice(3));
        // and the filters apply before the offset
        const alices = await store.listConversations({ participantId: alice.id, offset: 6 });
        expect(alices.items.map((c) => c.id)).toEqual(all.slice(6));
      });
    });

    describeAttachmentContract(() => store);
    describeReactionContract(() => store);
    describePostContract(() => store);
    describeRunContract(() => store);
    describeUseContract(() => store);
    describeForgetContract(() => store);

    describe('provenance', () => {
      it('keeps a reply’s traceId and sources, read every way', async () => {
        const sources = [
          { documentId: 'kb/refunds.md', name: 'Refund policy', chunk: '3', score: 0.82 },
          { documentId: 'https://example.com/faq#shipping' },
        ];
        const reply = turn({ participant: agent, content: 'refunds take five days' });
        await store.append({ ...reply, traceId: 'resp_abc123', sources });
        const plain = await store.append(turn({ content: 'thanks' }));

        const [stored] = await store.get(C1, { participantIds: [agent.id] });
        expect(stored).toMatchObject({ traceId: 'resp_abc123', sources });
        expect(await store.getMessage?.(C1, reply.id)).toMatchObject({ sources });
        expect((await store.search(C1, 'refunds'))[0]).toMatchObject({ traceId: 'resp_abc123' });
        const [other] = await store.get(C1, { participantIds: [alice.id] });
        expect(other?.id).toBe(plain.message.id);
        expect(other).not.toHaveProperty('traceId');
        expect(other).not.toHaveProperty('sources');
      });

      it('keeps them through an edit and a deletion', async () => {
        const reply = turn({ participant: agent, messageId: 'p9' });
        await store.append({ ...reply, traceId: 't-1', sources: [{ documentId: 'd1' }] });
        await store.recordEdit({ ...ref('p9'), content: 'edited', editedAt: at(5) });
        await store.recordDeletion({ ...ref('p9'), deletedAt: at(6) });
        const [stored] = await store.get(C1, { includeDeleted: true });
        expect(stored).toMatchObject({ traceId: 't-1', sources: [{ documentId: 'd1' }] });
      });

      it('takes a streamed reply’s traceId and sources from the confirmation that ends it', async () => {
        // A store without a run ledger keeps no outbox: no reply is recorded before it is sent.
        if (store.commit === undefined) return expect(store.getRuns).toBeUndefined();
        const reply = turn({ participant: agent, content: 'refunds' });
        const sources = [{ documentId: 'kb/refunds.md', score: 0.5 }];
        await store.commit([{ kind: 'reply', message: reply }]);
        const [confirmed] = await store.commit([
          {
            kind: 'confirm',
            confirmation: {
              id: reply.id,
              conversationId: C1,
              messageIds: ['p1'],
              delivery: 'sent',
              content: 'refunds take five days',
              traceId: 'resp_stream',
              sources,
            },
          },
        ]);
        expect(confirmed?.ok).toBe(true);
        const [stored] = await store.get(C1);
        expect(stored).toMatchObject({
          content: 'refunds take five days',
          delivery: 'sent',
          traceId: 'resp_stream',
          sources,
        });
      });
    });

    describe('forgetParticipant', () => {
      async function seed(): Promise<void> {
        await store.append(turn({ participant: alice, content: 'my card is 4242' }));
        await store.append(turn({ participant: bob, content: 'thanks alice card received' }));
        await store.append(turn({ conversationId: C2, participant: alice, content: 'card again' }));
      }

      it('deletes everything a participant wrote, everywhere', async () => {
        await seed();
        expect(await store.forgetParticipant(alice.id)).toBe(2);
        expect((await store.get(C1)).map((m) => m.participant.id)).toEqual([bob.id]);
        expect(await store.get(C2)).toEqual([]);
        expect((await store.search(C1, 'card')).map((m) => m.participant.id)).toEqual([bob.id]);
        expect(await store.search(C1, '4242')).toEqual([]);
      });

      it('deletes the mentions of them and the reply links to them in everyone’s turns', async () => {
        // given Bob answering Alice and mentioning her in a conversation she never wrote in
        const about = turn({
          conversationId: C2,
          participant: bob,
          mentions: [alice.id, 'telegram:1003'],
          replyToParticipantId: alice.id,
          content: 'as alice said',
        });
        await store.append(about);
        await store.append(turn({ participant: alice }));

        // when Alice is forgotten
        await store.forgetParticipant(alice.id);

        // then Bob's turn stays, naming her nowhere, and is no longer found as concerning her
        const [kept] = await store.get(C2);
        expect(kept?.content).toBe('as alice said');
        expect(kept?.metadata.mentions).toEqual(['telegram:1003']);
        expect(kept?.metadata).not.toHaveProperty('replyToParticipantId');
        expect(await store.get(C2, { concerning: { aliases: [alice.id] } })).toEqual([]);
        expect(await store.get(C2, { concerning: { aliases: ['telegram:1003'] } })).toHaveLength(1);
      });

      it('redacts instead when asked: the turns stay, their text and name do not', async () => {
        await seed();
        expect(await store.forgetParticipant(alice.id, { mode: 'redact' })).toBe(2);
        const turns = await store.get(C1);
        expect(turns).toHaveLength(2);
        const redacted = turns.find((m) => m.participant.id === alice.id);
        expect(redacted?.content).not.toContain('4242');
        expect(redacted?.participant.displayName).not.toBe(alice.displayName);
        expect(turns.find((m) => m.participant.id === bob.id)?.content).toBe(
          'thanks alice card received',
        );
        expect(await store.search(C1, '4242')).toEqual([]);
        expect(await store.forgetParticipant('nobody')).toBe(0);
      });

      /** Bob then Alice in C1; only Alice, and a summary, in C3. */
      async function seedSpans(): Promise<string> {
        const C3 = 'telegram:44';
        await store.append(turn({ participant: bob, content: 'first', timestamp: at(10) }));
        await store.append(turn({ participant: alice, content: 'last', timestamp: at(20) }));
        await store.append(turn({ conversationId: C3, content: 'alone', timestamp: at(30) }));
        await store.append(summary('support', at(40), 'alice was alone', C3));
        return C3;
      }

      it('drops a conversation left empty, and the others span what remains', async () => {
        const C3 = await seedSpans();
        await store.forgetParticipant(alice.id);
        expect(await store.getConversation(C1)).toMatchObject({
          messageCount: 1,
          firstMessageAt: at(10),
          lastMessageAt: at(10),
        });
        expect(await store.getConversation(C3)).toBeUndefined();
        expect((await store.listConversations()).items.map((c) => c.id)).toEqual([C1]);
      });

      it('keeps every conversation when redacting, each counting what remains', async () => {
        const C3 = await seedSpans();
        await store.forgetParticipant(alice.id, { mode: 'redact' });
        expect(await store.getConversation(C1)).toMatchObject({
          messageCount: 2,
          lastMessageAt: at(20),
        });
        expect(await store.getConversation(C3)).toMatchObject({
          messageCount: 1,
          lastMessageAt: at(30),
        });
      });

      it.each(['delete', 'redact'] as const)(
        'removes the summaries of the conversations the person wrote in (%s), and only those',
        async (mode) => {
          // given summaries in a conversation Alice wrote in and in one she did not
          await seed();
          await store.append(summary('support', at(50), 'alice said her card is 4242'));
          const C3 = 'telegram:C3';
          await store.append(turn({ conversationId: C3, participant: bob, content: 'hello' }));
          await store.append(summary('support', at(60), 'bob said hello', C3));

          // when Alice is forgotten
          expect(await store.forgetParticipant(alice.id, { mode })).toBe(2);

          // then the summary that could retell her words is gone, the other stays
          expect(await store.getSummary(C1, 'support')).toBeUndefined();
          expect((await store.getSummary(C3, 'support'))?.content).toBe('bob said hello');
          const c1 = await store.get(C1, { includeSummaries: true });
          expect(c1.some((m) => m.content.includes('4242'))).toBe(false);
          expect((await store.getConversation(C1))?.messageCount).toBe(c1.length);
        },
      );

      it('counts the turns of a forgotten agent, not its rolling summaries', async () => {
        // given an agent that wrote one turn and one summary in C1
        const support = { kind: 'agent' as const, id: 'support' };
        await store.append(turn({ participant: support, content: 'how can I help?' }));
        await store.append(summary('support', at(50), 'a customer asked for help'));

        // when it is forgotten, its one turn is counted, and the summary is gone too
        expect(await store.forgetParticipant('support')).toBe(1);
        expect(await store.getSummary(C1, 'support')).toBeUndefined();
      });
    });

    describe('edits, deletions and summaries', () => {
      it('records an edit by platform message id', async () => {
        await store.append(turn({ messageId: 'p1', content: 'teh original' }));
        expect(
          await store.recordEdit({ ...ref('p1'), content: 'the fixed', editedAt: at(9) }),
        ).toBe(true);
        const [edited] = await store.get(C1);
        expect(edited?.content).toBe('the fixed');
        expect(edited?.editedAt).toBe(at(9));
        expect(await store.search(C1, 'fixed')).toHaveLength(1);
        expect(await store.search(C1, 'teh')).toEqual([]);
      });

      it('keeps the newest text when an older edit comes again after a later one', async () => {
        // given a turn edited twice
        await store.append(turn({ messageId: 'p1', content: 'draft' }));
        await store.recordEdit({ ...ref('p1'), content: 'first edit', editedAt: at(8) });
        await store.recordEdit({ ...ref('p1'), content: 'second edit', editedAt: at(9) });

        // when the platform delivers the first edit again (a retry of an unacknowledged event)
        expect(
          await store.recordEdit({ ...ref('p1'), content: 'first edit', editedAt: at(8) }),
        ).toBe(true);

        // then the turn keeps the second edit's text and time, and search finds only that
        const [edited] = await store.get(C1);
        expect([edited?.content, edited?.editedAt]).toEqual(['second edit', at(9)]);
        expect(await store.search(C1, 'second')).toHaveLength(1);
        expect(await store.search(C1, 'first')).toEqual([]);
      });

      it('answers false for an edit or deletion of an unknown message', async () => {
        await store.append(turn({ messageId: 'p1' }));
        expect(await store.recordEdit({ ...ref('p2'), content: 'x', editedAt: at(1) })).toBe(false);
        expect(await store.recordDeletion({ ...ref('p2'), deletedAt: at(1) })).toBe(false);
        expect(
          await store.recordEdit({ ...ref('p1', 'other'), content: 'x', editedAt: at(1) }),
        ).toBe(false);
      });

      it('keeps a deleted message as a tombstone, hidden unless asked', async () => {
        await store.append(turn({ messageId: 'p1', content: 'oops' }));
        await store.append(turn({ messageId: 'p2', content: 'fine' }));
        expect(await store.recordDeletion({ ...ref('p1'), deletedAt: at(7) })).toBe(true);
        expect((await store.get(C1)).map((m) => m.content)).toEqual(['fine']);
        const all = await store.get(C1, { includeDeleted: true });
        expect(all.map((m) => [m.content, m.deletedAt])).toEqual([
          ['oops', at(7)],
          ['fine', undefined],
        ]);
      });

      it('marks a reply deleted when a later part of it is, and edits it by its first only', async () => {
        // given a reply the platform took in two parts
        const reply = turn({ participant: agent, messageId: 'p1', content: 'a long answer' });
        reply.metadata.partMessageIds = ['p2'];
        await store.append(reply);

        // when its second part is edited (as a platform reports the bot's own edits of it)
        // then the reply keeps its text: a part's text is not the reply's
        expect(await store.recordEdit({ ...ref('p2'), content: 'x', editedAt: at(6) })).toBe(false);
        // and when its second part is deleted, the reply is (a tombstone), in its channel only
        expect(await store.recordDeletion({ ...ref('p2', '43'), deletedAt: at(7) })).toBe(false);
        expect(await store.recordDeletion({ ...ref('p2'), deletedAt: at(7) })).toBe(true);
        const [stored] = await store.get(C1, { includeDeleted: true });
        expect([stored?.content, stored?.deletedAt]).toEqual(['a long answer', at(7)]);
      });

      it('returns the newest summary of that agent only', async () => {
        await store.append(summary(agent.id, at(1), 'old summary'));
        await store.append(summary(agent.id, at(2), 'new summary'));
        await store.append(summary(otherAgent.id, at(3), 'not mine'));
        await store.append(summary(agent.id, at(1), 'elsewhere', C2));
        expect((await store.getSummary(C1, agent.id))?.content).toBe('new summary');
        expect((await store.getSummary(C1, otherAgent.id))?.content).toBe('not mine');
        expect(await store.getSummary(C1, 'nobody')).toBeUndefined();
      });
    });
  });
}

// ---------------------------------------------------------------------------------------
// Fixtures

const C1 = 'telegram:42';
const C2 = 'telegram:43';
const alice: Participant = { kind: 'user', id: 'telegram:1001', displayName: 'Alice' };
const bob: Participant = { kind: 'user', id: 'telegram:1002', displayName: 'Bob' };
const agent: Participant = { kind: 'agent', id: 'support-agent', displayName: 'Support' };
const otherAgent: Participant = { kind: 'agent', id: 'other-agent', displayName: 'Other' };

interface TurnFields {
  id: string;
  conversationId: string;
  participant: Participant;
  content: string;
  timestamp: string;
  scope: NewMessage['scope'];
  channelType: string;
  channelId: string;
  channelName: string;
  threadId: string;
  messageId: string;
  mentions: string[];
  replyToParticipantId: string;
  replyToMessageId: string;
}

let counter = 0;

/** A turn in C1 by Alice unless told otherwise; only the given metadata keys are set. */
function turn(fields: Partial<TurnFields> = {}): NewMessage {
  counter++;
  const { id, conversationId, participant, content, timestamp, scope, mentions, ...meta } = fields;
  return {
    id: id ?? `msg-${counter}`,
    conversationId: conversationId ?? C1,
    participant: participant ?? alice,
    content: content ?? `turn number ${counter}`,
    timestamp: timestamp ?? at(0),
    scope: scope ?? 'channel',
    metadata: {
      channelType: meta.channelType ?? 'telegram',
      channelId: meta.channelId ?? '42',
      mentions: mentions ?? [],
      ...(meta.channelName === undefined ? {} : { channelName: meta.channelName }),
      ...(meta.threadId === undefined ? {} : { threadId: meta.threadId }),
      ...(meta.messageId === undefined ? {} : { messageId: meta.messageId }),
      ...(meta.replyToParticipantId === undefined
        ? {}
        : { replyToParticipantId: meta.replyToParticipantId }),
      ...(meta.replyToMessageId === undefined ? {} : { replyToMessageId: meta.replyToMessageId }),
    },
  };
}

function summary(agentId: string, timestamp: string, content = 'summary', conversationId = C1) {
  const message = turn({ conversationId, timestamp, content, participant: agent });
  message.participant = { kind: 'agent', id: agentId };
  message.metadata.isSummary = true;
  message.metadata.summaryForAgentId = agentId;
  return message;
}

function ref(messageId: string, channelId = '42') {
  return { channelType: 'telegram', channelId, messageId };
}

/** Seconds after 2026-01-01T00:00:00Z, as a stored timestamp. */
function at(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();
}

/** Plain words as the contract defines them (for the ASCII queries they are compared on). */
function words(text: string): string[] {
  return (
    text
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) ?? []
  );
}

function tokens(messages: StoredMessage[]): number {
  return messages.reduce((sum, m) => sum + defaultTokenizer.count(m.content), 0);
}

/** Unrelated turns, so that search ranking has document frequencies to work with. */
async function seedFiller(store: ConversationStore): Promise<void> {
  const filler = ['good morning', 'lunch at noon', 'see you tomorrow', 'weather is nice'];
  for (const content of filler) await store.append(turn({ content }));
}
