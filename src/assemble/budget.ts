import type { ModelMessage } from 'ai';
import type { Tokenizer } from '../tokenizer.js';
import { countModelMessageTokens, renderUnit } from './projection.js';
import type { TextUnit, Unit } from './projection.js';

/**
 * Appended to a turn that was cut to fit the budget; counted in the budget.
 *
 * @example
 * ```ts
 * import { TRUNCATION_MARKER } from './budget.js';
 * const wasCut = text.endsWith(TRUNCATION_MARKER);
 * ```
 */
export const TRUNCATION_MARKER = ' …[truncated]';

/** A turn older than the current one is only cut down when at least this much of it fits. */
const MIN_TRUNCATED_TOKENS = 16;

/** A unit as it goes into the prompt: its messages and what they cost. */
export interface FittedUnit {
  unit: Unit;
  messages: ModelMessage[];
  tokens: number;
  truncated: boolean;
}

function cost(messages: readonly ModelMessage[], tokenizer: Tokenizer): number {
  return messages.reduce((sum, message) => sum + countModelMessageTokens(message, tokenizer), 0);
}

/** Renders a unit in full; `undefined` when it costs more than `room`. */
function fitWhole(unit: Unit, room: number, tokenizer: Tokenizer): FittedUnit | undefined {
  const messages = renderUnit(unit, tokenizer);
  const tokens = cost(messages, tokenizer);
  return tokens <= room ? { unit, messages, tokens, truncated: false } : undefined;
}

/**
 * Cuts a text unit's content (never its speaker prefix) so that the message, with
 * {@link TRUNCATION_MARKER}, costs at most `room`. `undefined` when fewer than `minContent`
 * tokens of content would survive.
 */
export function truncateUnit(
  unit: TextUnit,
  room: number,
  tokenizer: Tokenizer,
  minContent = MIN_TRUNCATED_TOKENS,
): FittedUnit | undefined {
  const render = (content: string): FittedUnit => {
    const messages = renderUnit({ ...unit, content }, tokenizer);
    return { unit, messages, tokens: cost(messages, tokenizer), truncated: true };
  };
  let keep = room - render(TRUNCATION_MARKER.trimStart()).tokens;
  while (keep >= minContent) {
    const fitted = render(tokenizer.truncate(unit.content, keep).trimEnd() + TRUNCATION_MARKER);
    if (fitted.tokens <= room) return fitted;
    // Token boundaries can merge across the cut; shrink by the excess and try again.
    keep -= Math.max(1, fitted.tokens - room);
  }
  return undefined;
}

/**
 * The current turn always goes in: whole when it fits, else cut down to `room` (its prefix
 * too, as a last resort, when even the prefix does not fit).
 */
export function fitCurrent(unit: TextUnit, room: number, tokenizer: Tokenizer): FittedUnit {
  const fitted =
    fitWhole(unit, room, tokenizer) ??
    truncateUnit(unit, room, tokenizer, 1) ??
    truncateUnit({ ...unit, prefix: '', content: unit.prefix + unit.content }, room, tokenizer, 0);
  if (fitted !== undefined) return fitted;
  // Nothing of the turn fits at all (a budget of a few tokens): send it empty.
  const messages = renderUnit({ ...unit, prefix: '', content: '' }, tokenizer);
  return { unit, messages, tokens: cost(messages, tokenizer), truncated: true };
}

/**
 * Fills `room` with units newest to oldest and stops at the first one that does not fit, so
 * the history is one unbroken recent stretch. A text turn that does not fit is cut down
 * (when enough of it fits) and ends the stretch; a tool call whose result does not fit is
 * tried with its result masked, and otherwise dropped together with its result.
 * Returns the fitted units in chronological order.
 */
export function fitUnits(
  units: readonly Unit[],
  room: number,
  tokenizer: Tokenizer,
): { fitted: FittedUnit[]; tokens: number } {
  const fitted: FittedUnit[] = [];
  let left = room;
  for (let i = units.length - 1; i >= 0; i--) {
    const unit = units[i] as Unit;
    let next = fitWhole(unit, left, tokenizer);
    let last = false;
    if (next === undefined && unit.kind === 'tool' && !unit.masked) {
      next = fitWhole({ ...unit, masked: true }, left, tokenizer);
    }
    if (next === undefined && unit.kind === 'text') {
      next = truncateUnit(unit, left, tokenizer);
      last = true;
    }
    if (next === undefined) break;
    fitted.push(next);
    left -= next.tokens;
    if (last) break;
  }
  return { fitted: fitted.reverse(), tokens: room - left };
}

/** Fits a summary text as a system message; `undefined` when it cannot fit usefully. */
export function fitSummary(
  unit: TextUnit,
  room: number,
  tokenizer: Tokenizer,
): FittedUnit | undefined {
  return fitWhole(unit, room, tokenizer) ?? truncateUnit(unit, room, tokenizer);
}
