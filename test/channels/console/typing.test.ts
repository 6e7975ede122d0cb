import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleChannel } from 'colloquy/console';
import { botOn, GatedAgent } from '../../fixtures/gated-agent.js';

const user = { kind: 'user' as const, id: 'console:ada', displayName: 'Ada' };

/** An output stream that remembers what was written and lets a test wait for some of it. */
function screen() {
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  const shows = (text: string) =>
    new Promise<void>((resolve) => {
      const look = () => {
        if (!written.includes(text)) return;
        output.off('data', look);
        resolve();
      };
      output.on('data', look);
      setImmediate(look);
    });
  return { output, written: () => written, shows };
}

async function consoleBot(terminal: boolean) {
  const input = new PassThrough();
  const { output, written, shows } = screen();
  const channel = new ConsoleChannel({ input, output, user, terminal, prompt: '> ' });
  const agent = new GatedAgent('Order 4711 ships tomorrow.');
  const bot = await botOn(channel, agent);
  return { input, agent, bot, written, shows };
}

describe('the console while the agent works', () => {
  it('shows "thinking…" on a terminal, erased when the reply is printed', async () => {
    const { input, agent, bot, written, shows } = await consoleBot(true);
    input.write('where is my order?\n');
    await agent.started;
    await shows('thinking…');
    agent.release();
    await shows('Order 4711 ships tomorrow.');
    await bot.stop();
    const screenText = written();
    const thinking = screenText.indexOf('thinking…');
    const erased = screenText.indexOf('\r\x1b[K', thinking);
    expect(thinking).toBeGreaterThan(-1);
    expect(erased).toBeGreaterThan(thinking);
    expect(erased).toBeLessThan(screenText.indexOf('Order 4711 ships tomorrow.'));
  });

  it('prints only the reply when the output is a pipe', async () => {
    const { input, agent, bot, written, shows } = await consoleBot(false);
    input.write('where is my order?\n');
    await agent.started;
    agent.release();
    await shows('Order 4711 ships tomorrow.');
    await bot.stop();
    expect(written()).toBe('Order 4711 ships tomorrow.\n');
  });
});
