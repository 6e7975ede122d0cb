import { APICallError, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import {
  assemblePrompt,
  BaseAgent,
  InMemoryConversationStore,
  offlineModel,
  silentLogger,
  type FetchAttachment,
  type MessageAttachment,
  type NewMessage,
} from 'colloquy';
import { answer } from '../../fixtures/model-answer.js';
import { filesIn, PNG, userTextIn } from '../../fixtures/file-reading-agent.js';
import { AGENT, alice, DM, turn } from '../assemble.fixtures.js';

/** A platform holding files by id: what it served, and the ids asked for. */
function platform(files: Record<string, Buffer>) {
  const asked: string[] = [];
  const fetch: FetchAttachment = async (file) => {
    asked.push(file.platformFileId ?? '');
    const bytes = files[file.platformFileId ?? ''];
    if (bytes === undefined) throw new Error('not found');
    return { bytes };
  };
  return { asked, fetch };
}

function shared(content: string, attachments: MessageAttachment[]): NewMessage {
  return { ...turn(alice, content, { conversationId: DM }), attachments };
}

const png = (id: string, name = `${id}.png`): MessageAttachment => ({
  kind: 'image',
  name,
  mimeType: 'image/png',
  size: PNG.length,
  platformFileId: id,
});

function parts(messages: ModelMessage[]): string[] {
  return messages.flatMap((message) =>
    typeof message.content === 'string'
      ? []
      : message.content.map((part) =>
          part.type === 'image' ? `image ${part.mediaType}` : `${part.type}`,
        ),
  );
}

describe('files in an assembled prompt', () => {
  it('gives the current turn’s files first, then the newest turns’ in order, up to maxCount', async () => {
    const store = new InMemoryConversationStore();
    const older = shared('old ones', [png('F1'), png('F2')]);
    const current = shared('new one', [png('F3')]);
    await store.append(older);
    await store.append(current);
    const { asked, fetch } = platform({ F1: PNG, F2: PNG, F3: PNG });

    const prompt = await assemblePrompt(store, DM, AGENT.id, AGENT.name, {
      currentMessage: current,
      attachments: { fetch, maxCount: 2 },
    });

    expect(asked.sort()).toEqual(['F1', 'F3']);
    expect(parts(prompt.messages)).toEqual(['text', 'image image/png', 'text', 'image image/png']);
    expect(userTextIn(prompt.messages as never)).toContain(
      'Alice: old ones [image: F1.png, 70 bytes] [image: F2.png, 70 bytes]',
    );
  });

  it('keeps the placeholder alone for a kind not asked for, and for bytes that are not what the type says', async () => {
    const store = new InMemoryConversationStore();
    const notes: MessageAttachment = {
      kind: 'file',
      name: 'a.txt',
      mimeType: 'text/plain',
      platformFileId: 'T1',
    };
    const fake = png('F1', 'fake.png');
    const current = shared('look', [notes, fake]);
    await store.append(current);
    const { asked, fetch } = platform({ T1: Buffer.from('hello'), F1: Buffer.from('not a png') });

    const prompt = await assemblePrompt(store, DM, AGENT.id, AGENT.name, {
      currentMessage: current,
      attachments: { fetch, kinds: ['image'] },
    });

    expect(asked).toEqual(['F1']);
    expect(prompt.messages).toEqual([
      { role: 'user', content: 'Alice: look [file: a.txt] [image: fake.png, 70 bytes]' },
    ]);
  });

  it('reports a file that cannot be fetched and answers with its placeholder', async () => {
    const store = new InMemoryConversationStore();
    const current = shared('', [png('GONE', 'gone.png')]);
    await store.append(current);
    const reported: string[] = [];

    const prompt = await assemblePrompt(store, DM, AGENT.id, AGENT.name, {
      currentMessage: current,
      attachments: platform({}),
      onError: (error) => reported.push(error.message),
    });

    expect(prompt.messages).toEqual([
      { role: 'user', content: 'Alice: [image: gone.png, 70 bytes]' },
    ]);
    expect(reported).toEqual(['could not fetch [image: gone.png, 70 bytes]: not found']);
  });
});

class Reader extends BaseAgent {
  name = AGENT.name;
  description = 'Reads files';
  instructions = '';
  override logger = silentLogger;
}

async function runOn(agent: BaseAgent, fetch: FetchAttachment) {
  const store = new InMemoryConversationStore();
  const current = shared('what is this?', [png('F1', 'dot.png')]);
  await store.append(current);
  const warnings: string[] = [];
  agent.logger = { ...silentLogger, warn: (message) => void warnings.push(message) };
  const result = await agent.run(current, {
    conversationId: DM,
    store,
    aliases: [AGENT.id],
    record: async () => undefined,
    depth: 0,
    fetchAttachment: fetch,
  });
  return { result, warnings };
}

describe('BaseAgent.attachments', () => {
  it('asks a model that refuses the files again with the placeholders only', async () => {
    const agent = new Reader();
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        if (filesIn(prompt).length > 0) {
          throw new APICallError({
            message: 'image input is not supported by this model',
            url: 'http://127.0.0.1/v1/chat/completions',
            requestBodyValues: {},
            statusCode: 400,
          });
        }
        return answer(`I read: ${userTextIn(prompt)}`);
      },
    });
    agent.model = model;

    const { result, warnings } = await runOn(agent, platform({ F1: PNG }).fetch);

    expect(result.output).toBe('I read: Alice: what is this? [image: dot.png, 70 bytes]');
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(warnings).toEqual([expect.stringContaining('the model refused the files')]);
  });

  it('fetches nothing with attachments false, nor for the offline model', async () => {
    const off = new Reader();
    off.attachments = false;
    off.model = new MockLanguageModelV3({ doGenerate: async () => answer('ok') });
    const first = platform({ F1: PNG });
    await runOn(off, first.fetch);

    const offline = new Reader();
    offline.model = offlineModel();
    const second = platform({ F1: PNG });
    await runOn(offline, second.fetch);

    expect([...first.asked, ...second.asked]).toEqual([]);
  });
});
