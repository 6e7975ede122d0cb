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
