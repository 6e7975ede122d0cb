/**
 * `npx colloquy try <platform>`: the example bot of a platform against its loopback fake, and
 * this terminal as a person writing to it, so mentions, threads and groups can be seen before
 * creating a real bot. No account, no key (the offline model answers unless COLLOQUY_MODEL
 * names another).
 *
 *   node dist/examples/try.js telegram
 */
import { exitWith } from './launch.js';

const platforms: Record<string, () => Promise<unknown>> = {
  telegram: () => import('./try-telegram.js'),
};

const platform = process.argv[2]?.trim().toLowerCase() ?? '';
const start = platforms[platform];
if (start === undefined) {
  exitWith(
    `colloquy: no fake platform "${platform}" to try; one of: ${Object.keys(platforms).join(', ')}`,
  );
}
await start();
