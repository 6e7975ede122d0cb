/** What a tool input check returns (the shape the AI SDK's `jsonSchema({ validate })` expects). */
export type ValidationResult<T> = { success: true; value: T } | { success: false; error: Error };

/** A JSON-schema-ish description of one object's fields, checked by hand (no zod). */
export type FieldRules = Record<
  string,
  { type: 'string' | 'integer'; required?: boolean; min?: number; max?: number }
>;

/**
 * Checks a tool input against `rules`: an object with exactly these fields (unknown ones are
 * rejected, so a model cannot slip in `conversationId`), of the right types and ranges.
 *
 * @example
 * ```ts
 * validateObject({ query: 'refund' }, { query: { type: 'string', required: true } });
 * // { success: true, value: { query: 'refund' } }
 * ```
 */
export function validateObject<T>(value: unknown, rules: FieldRules): ValidationResult<T> {
  const fail = (message: string): ValidationResult<T> => ({
    success: false,
    error: new Error(message),
  });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('input must be a JSON object');
  }
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !(key in rules));
  if (unknown.length > 0) return fail(`unknown properties: ${unknown.join(', ')}`);
  for (const [key, rule] of Object.entries(rules)) {
    const field = record[key];
    if (field === undefined) {
      if (rule.required === true) return fail(`"${key}" is required`);
      continue;
    }
    if (rule.type === 'string' && (typeof field !== 'string' || field.trim() === '')) {
      return fail(`"${key}" must be a non-empty string`);
    }
    if (rule.type === 'integer') {
      if (typeof field !== 'number' || !Number.isInteger(field)) {
        return fail(`"${key}" must be an integer`);
      }
      if (
        (rule.min !== undefined && field < rule.min) ||
        (rule.max !== undefined && field > rule.max)
      ) {
        return fail(`"${key}" must be between ${rule.min ?? '-∞'} and ${rule.max ?? '∞'}`);
      }
    }
  }
  return { success: true, value: record as T };
}
