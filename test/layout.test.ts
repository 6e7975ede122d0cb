import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** Every module a file imports (static, dynamic, re-exports), as written; comments skipped. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const found = text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm);
  return [...found].map((match) => match[1]!);
}

describe('the layout', () => {
  it('keeps src/ the core: it imports nothing from db/, channels/ or agents/', () => {
    const outside: string[] = [];
    for (const file of sources(join(root, 'src'))) {
      for (const spec of specifiers(file)) {
        const target = spec.startsWith('.')
          ? relative(root, resolve(dirname(file), spec))
          : spec.startsWith('colloquy/')
            ? spec
            : undefined;
        if (target !== undefined && !target.startsWith('src/')) {
          outside.push(`${relative(root, file)} imports ${spec}`);
        }
      }
    }
    expect(outside).toEqual([]);
  });
});
