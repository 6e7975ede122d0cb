import type { Agent, Command, NewMessage } from 'colloquy';

/** An agent that answers every turn it gets with `answer(turn)`, keeping what it got. */
export function answering(
  id: string,
  answer: (turn: NewMessage) => { output: string; metadata?: Record<string, unknown> },
): Agent & { turns: NewMessage[] } {
  const turns: NewMessage[] = [];
  return {
    id,
    name: id,
    turns,
    async run(turn) {
      turns.push(turn);
      return answer(turn);
    },
  };
}

/** Approve / Deny, as `billing` asks under its answer to `/refund`. */
export const approveDeny = [
  { id: 'approve', label: 'Approve', style: 'primary' },
  { id: 'deny', label: 'Deny', style: 'danger' },
] as const;

/** An action id longer than any platform carries (Telegram 64 bytes, Discord 100, Slack 255). */
export const LONG_ID = `approve-refund-${'4242-'.repeat(60)}`;

/**
 * Two agents on one bot: `billing` asks for approval under its answer to `/refund` and says
 * what was pressed; `support` answers `/status`. Both would answer anything in a DM.
 */
export function interactionAgents() {
  const billing = answering('billing', (turn) => {
    const interaction = turn.metadata.interaction;
    if (interaction?.type === 'button') return { output: `billing: ${interaction.value}` };
    return {
      output: `Refund order ${interaction?.type === 'command' ? interaction.args : '?'}?`,
      metadata: { actions: approveDeny },
    };
  });
  const support = answering('support', (turn) => ({ output: `support: ${turn.content}` }));
  const commands: Command[] = [
    { name: 'refund', description: 'Refund an order', agent: 'billing' },
    { name: 'status', description: 'Order status', agent: 'support' },
    { name: 'ping', description: 'Is the bot up?', handler: () => 'pong' },
  ];
  return { billing, support, commands };
}

/**
 * `support` as it asks which size under a select (Small, Medium, Large) that stays, so the
 * person can change their choice, and says the size picked.
 */
export function sizeAsker(): Agent & { turns: NewMessage[] } {
  return answering('support', (turn) => {
    const picked = turn.metadata.interaction;
    if (picked?.type === 'button') return { output: `size ${picked.value}` };
    const options = [
      { label: 'Small', value: 's' },
      { label: 'Medium', value: 'm' },
      { label: 'Large', value: 'l' },
    ];
    return { output: 'Which size?', metadata: { select: { id: 'size', options, once: false } } };
  });
}

/** What a person's presses in `turns` are recorded as: the value and why it was refused. */
export function pressesOf(turns: readonly NewMessage[]): [string, string | undefined][] {
  return turns.flatMap(({ metadata: { interaction } }) =>
    interaction?.type === 'button' ? [[interaction.value, interaction.refused]] : [],
  );
}

/** `agent` as it shows its first words while it writes (streamed), then answers whole. */
export function streaming<A extends Agent>(agent: A): A {
  const run = agent.run.bind(agent);
  return Object.assign(agent, {
    run: async (turn: NewMessage, context: Parameters<Agent['run']>[1]) => {
      context.stream?.('Refund order');
      return run(turn, context);
    },
  });
}

/** `billing` as its one button's id is `LONG_ID`; it says the value pressed. */
export function longIdAsker(): Agent & { turns: NewMessage[] } {
  return answering('billing', (turn) => {
    const interaction = turn.metadata.interaction;
    if (interaction?.type === 'button')
      return { output: interaction.id === LONG_ID ? 'billing: the long one' : 'billing: ?' };
    return { output: 'Refund?', metadata: { actions: [{ id: LONG_ID, label: 'Approve' }] } };
  });
}
