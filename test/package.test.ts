import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './channels/console/bot.fixtures.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

interface PackageJson {
  license: string;
  scripts: Record<string, string>;
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** The files `npm pack` puts in the tarball (scripts skipped: the suite has built dist/). */
let packed: Set<string>;
beforeAll(async () => {
  buildIfStale();
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    timeout: 120_000,
  });
  const [tarball] = JSON.parse(stdout) as { files: { path: string }[] }[];
  packed = new Set(tarball?.files.map((file) => file.path));
}, 180_000);

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

describe('the package a newcomer installs', () => {
  it('has the MIT LICENSE that package.json names, and ships it', () => {
    expect(pkg.license).toBe('MIT');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(license).toContain('Permission is hereby granted, free of charge');
    expect(packed.has('LICENSE')).toBe(true);
  });

  it('builds itself when installed from git (prepare runs the build)', () => {
    expect(pkg.scripts.prepare).toBe('npm run build');
  });

  it('says in the README how to install it, with no placeholder, and that better-sqlite3 is a native module', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('\n## A bot'));
    expect(readme).toContain('## Install');
    expect(install).toContain('npm pack');
    expect(install).not.toMatch(/<[a-z]+>/);
    expect(install).toMatch(/better-sqlite3.{0,40} native module/s);
  });

  it('ships no source map that points at a file it does not ship', () => {
    const maps = [...packed].filter((path) => path.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    const unreadable: string[] = [];
    for (const path of maps) {
      const map = JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      map.sources.forEach((source, i) => {
        const shipped = packed.has(posix.join(posix.dirname(path), source));
        if (!shipped && typeof map.sourcesContent?.[i] !== 'string') {
          unreadable.push(`${path} → ${source}`);
        }
      });
    }
    expect(unreadable).toEqual([]);
  });

  it('ships no incremental build information', () => {
    expect([...packed].filter((path) => path.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it("types what users touch: every package the declarations import is one they install, with its types (store.db is better-sqlite3's Database; pg's types go with the optional pg)", () => {
    const installed = { ...pkg.dependencies, ...pkg.peerDependencies };
    const problems = new Set<string>();
    const needed = new Set<string>(['@types/node']);
    for (const file of walk(join(ROOT, 'dist'))) {
      if (!file.endsWith('.d.ts')) continue;
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from |import\()['"]([^'"]+)['"]/g)) {
        if (specifier === undefined || specifier.startsWith('.')) continue;
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : (specifier.split('/')[0] ?? specifier);
        if (name === 'colloquy' || name.startsWith('node:') || builtinModules.includes(name)) {
          continue;
        }
        if (!(name in installed)) {
          problems.add(
            `${name} (imported by dist/${file.slice(ROOT.length + 5)}) is not a dependency`,
          );
          continue;
        }
        const home = join(ROOT, 'node_modules', name);
        const own = JSON.parse(readFileSync(join(home, 'package.json'), 'utf8')) as {
          types?: string;
          typings?: string;
          exports?: unknown;
        };
        const typed =
          own.types !== undefined ||
          own.typings !== undefined ||
          JSON.stringify(own.exports ?? {}).includes('"types"') ||
          existsSync(join(home, 'index.d.ts'));
        const typesPackage = `@types/${name.replace(/^@/, '').replace('/', '__')}`;
        const typesInstalled = name in pkg.dependencies ? pkg.dependencies : installed;
        if (!typed) needed.add(typesPackage);
        if (!typed && !(typesPackage in typesInstalled)) {
          problems.add(
            `${name} has no types of its own and ${typesPackage} is not installed with it`,
          );
        }
      }
    }
    expect([...problems]).toEqual([]);

    // and no types package is a dependency unless the declarations need it
    const extra = Object.keys(pkg.dependencies).filter(
      (name) => name.startsWith('@types/') && !needed.has(name),
    );
    expect(extra).toEqual([]);
  });
});
