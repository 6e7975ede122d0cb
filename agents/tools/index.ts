export * from './conversation-search.js';
export * from './recall-tool-result.js';
export { validateObject, type FieldRules, type ValidationResult } from './validate.js';
export * from './follow-up.js';
