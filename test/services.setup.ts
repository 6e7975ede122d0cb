import { connect } from 'node:net';
import type { TestProject } from 'vitest/node';
import { ensureTemplate, pingPostgres, testServerUrl } from './postgres.setup.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis the Redis suites use, or why there is none (outside CI only). */
    redis: { url: string } | { unreachable: string };
    /** The Postgres server and the migrated template each test database copies. */
    postgres: { server: string; template: string } | { unreachable: string };
  }
}

/**
 * Vitest global setup: finds the services the suites talk to. Under `CI=true` a service
 * that does not answer fails the run here, before any test; elsewhere its suites are
 * skipped with the reason.
 */
export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.COLLOQUY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const problem = await ping(url);
  if (problem !== undefined && process.env.CI === 'true') {
    throw new Error(`Redis at ${url} does not answer (${problem}); .ci/run starts one`);
  }
  project.provide('redis', problem === undefined ? { url } : { unreachable: `${url}: ${problem}` });

  const server = testServerUrl();
  const where = server || 'the PG* variables';
  const down = await pingPostgres(server);
  if (down !== undefined && process.env.CI === 'true') {
    throw new Error(`Postgres at ${where} does not answer (${down}); .ci/run starts one`);
  }
  project.provide(
    'postgres',
    down === undefined
      ? { server, template: await ensureTemplate(server) }
      : { unreachable: `${where}: ${down}` },
  );
}

/** Undefined when a Redis server answers PING at `url`, else what went wrong. */
function ping(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    const done = (problem?: string) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(2000, () => done('no answer within 2 s'));
    socket.on('error', (error) => done(error.message));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      const reply = data.toString();
      done(reply.startsWith('+PONG') ? undefined : `answered ${JSON.stringify(reply.trim())}`);
    });
  });
}
