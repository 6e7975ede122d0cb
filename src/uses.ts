import type { NewMessage } from './types.js';

/**
 * The colloquy id of the message whose `once` buttons `press` uses (`Interaction.uses`), or
 * undefined for a turn that uses none. A store records one use per message, in the commit that
 * stores the press: the first press stored takes it, the same press delivered again (the same
 * turn id) keeps it, and any other press is stored as `refusedUse` makes it.
 *
 * @example
 * ```ts
 * const uses = usesOf(press); // 'telegram:42:17:billing:reply'
 * if (uses !== undefined && holder(uses, press.id) !== press.id) stored = refusedUse(press);
 * ```
 */
export function usesOf(press: Pick<NewMessage, 'metadata'>): string | undefined {
  const interaction = press.metadata.interaction;
  if (interaction?.type !== 'button' || interaction.refused !== undefined) return undefined;
  return interaction.uses;
}

/**
 * `press` as a store records it when another press used its message first: refused `used`,
 * answered by no agent, replying to nothing (as the bot records a press it refuses itself). No
 * agent run is created for it.
 *
 * @example
 * ```ts
 * refusedUse(press).metadata.interaction; // { type: 'button', …, refused: 'used' }
 * ```
 */
export function refusedUse<T extends NewMessage>(press: T): T {
  const {
    interaction,
    replyToMessageId: _to,
    replyToParticipantId: _of,
    ...metadata
  } = press.metadata;
  if (interaction?.type !== 'button') return press;
  const { agent: _agent, uses: _uses, ...rest } = interaction;
  return { ...press, metadata: { ...metadata, interaction: { ...rest, refused: 'used' } } };
}

/**
 * Whether a run of the turn `stored` may be created: not for an interaction refused (a press
 * stored refused `used` because another press used its message first).
 *
 * @example
 * ```ts
 * takesRuns(refusedUse(press)); // false
 * ```
 */
export function takesRuns(stored: Pick<NewMessage, 'metadata'>): boolean {
  return stored.metadata.interaction?.refused === undefined;
}

/**
 * `press` as a store records it: `take(uses, pressId)` records the use of the message it uses
 * when none is recorded and answers the press that holds it; another press's use refuses it.
 *
 * @example
 * ```ts
 * const stored = withUse(press, (uses, id) => claims.take(uses, id));
 * ```
 */
export function withUse<T extends NewMessage>(
  press: T,
  take: (uses: string, pressId: string) => string,
): T {
  const uses = usesOf(press);
  return uses === undefined || take(uses, press.id) === press.id ? press : refusedUse(press);
}
