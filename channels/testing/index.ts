export * from '../telegram/fake.js';
export * from '../slack/fake.js';
export * from '../discord/fake.js';
