import { defineConfig } from 'drizzle-kit';

// The Postgres schema's migrations (`npm run db:generate` writes both dialects').
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/postgres/schema.ts',
  out: './db/postgres/migrations',
});
