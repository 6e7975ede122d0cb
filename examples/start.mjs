// `npm start`: builds when a TypeScript source is newer than the last build, saying so (the
// first build takes a while), then runs the console bot in this process. With nothing
// changed it goes straight to the prompt. Plain JavaScript: it runs before anything is built.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (line) => process.stderr.write(`colloquy: ${line}\n`);

const reason = staleReason();
if (reason !== undefined) {
  say(`building (${reason}; the first build takes a while)…`);
  const started = Date.now();
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  const build = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (build.status !== 0) {
    say('the build failed (see above)');
    process.exit(build.status ?? 1);
  }
  say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
await import(pathToFileURL(join(root, 'dist/examples/console-bot.js')).href);

/**
 * Why a build is needed, or undefined when none is: `tsc -b` keeps its build information in
 * dist/ and touches it on every build, so a source newer than it changed since.
 */
function staleReason() {
  const info = join(root, 'dist/tsconfig.tsbuildinfo');
  if (!existsSync(info)) return 'no build yet';
  const built = statSync(info).mtimeMs;
  const config = join(root, 'tsconfig.json');
  if (statSync(config).mtimeMs > built) return 'tsconfig.json changed';
  const { include = [] } = JSON.parse(readFileSync(config, 'utf8'));
  for (const folder of include) {
    for (const file of sources(join(root, folder))) {
      if (statSync(file).mtimeMs > built) return `${relative(root, file)} changed`;
    }
  }
  return undefined;
}

/** The TypeScript files of a tsconfig `include` entry (a folder, or one file). */
function* sources(dir) {
  if (!existsSync(dir)) return;
  if (statSync(dir).isFile()) {
    if (/\.[cm]?tsx?$/.test(dir)) yield dir;
    return;
  }
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.[cm]?tsx?$/.test(entry.name)) yield path;
  }
}
