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
      metadata: {
        actions: [
          { id: 'approve', label: 'Approve', style: 'primary' },
          { id: 'deny', label: 'Deny', style: 'danger' },
        ],
      },
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

/** `support` as it asks which size under a select (Small, Medium, Large) and says the size picked. */
export function sizeAsker(): Agent & { turns: NewMessage[] } {
  return answering('support', (turn) => {
    const picked = turn.metadata.interaction;
    if (picked?.type === 'button') return { output: `size ${picked.value}` };
    const options = [
      { label: 'Small', value: 's' },
      { label: 'Medium', value: 'm' },
      { label: 'Large', value: 'l' },
    ];
    return { output: 'Which size?', metadata: { select: { id: 'size', options } } };
  });
}

/** What a person's presses in `turns` are recorded as: the value and why it was refused. */
export function pressesOf(turns: readonly NewMessage[]): [string, string | undefined][] {
  return turns.flatMap(({ metadata: { interaction } }) =>
    interaction?.type === 'button' ? [[interaction.value, interaction.refused]] : [],
  );
}
