/** Block Kit as FakeSlack checks it. */

/**
 * Whether Block Kit `raw` (as the Web API client sends it: a JSON string) is within Slack's
 * limits on interactive elements: `action_id` 255, a button's value 2000, an option's value
 * 150 and a label 75 characters.
 */
export function blocksValid(raw: unknown): boolean {
  if (raw === undefined) return true;
  const blocks = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
    elements?: Record<string, unknown>[];
  }[];
  if (!Array.isArray(blocks)) return false;
  const label = (text: unknown) => String((text as { text?: unknown })?.text ?? '').length <= 75;
  return blocks.every((block) =>
    (block.elements ?? []).every((e) => {
      if (e.type !== 'button' && e.type !== 'static_select') return true;
      const options = (e.options ?? []) as { text?: unknown; value?: unknown }[];
      return (
        String(e.action_id ?? '').length <= 255 &&
        String(e.value ?? '').length <= 2000 &&
        label(e.text ?? { text: '' }) &&
        options.every((o) => String(o.value ?? '').length <= 150 && label(o.text))
      );
    }),
  );
}
