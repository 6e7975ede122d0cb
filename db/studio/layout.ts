import { h, href } from './html.js';
import type { Html } from './html.js';

/** The page shell: styles and the client script are files served by the studio itself. */
export function layout(title: string, body: Html, current: string): Html {
  const link = (path: string, label: string) =>
    h`<a href="${path}"${current === path ? h` aria-current="page"` : ''}>${label}</a>`;
  return h`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · colloquy studio</title>
<link rel="stylesheet" href="/assets/studio.css">
<script src="/assets/studio.js" defer></script>
</head>
<body>
<header><strong>colloquy studio</strong>
<nav>${link('/', 'Conversations')} ${link('/runs', 'Agent runs')} ${link('/overview', 'Overview')} ${link('/people', 'People')}</nav>
</header>
<main>${body}</main>
</body>
</html>`;
}

/** `2026-03-10 15:00:06` (UTC), with the full timestamp in `datetime`. */
export function time(iso: string | undefined): Html {
  if (iso === undefined) return h``;
  return h`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}</time>`;
}

/**
 * What people call the conversation: its title, `#general`, a thread of a channel, or a DM by
 * the person in it (`DM with Alice Martin`; by its id while nobody but the bot wrote there).
 */
export function conversationName(c: {
  id: string;
  channelName?: string;
  threadId?: string;
  title?: string;
  scope: string;
  participants?: readonly { name: string; kind: string }[];
}): string {
  if (c.title !== undefined && c.title !== '') return c.title;
  const name = c.channelName ?? c.id;
  if (c.scope === 'thread') return `${name} › thread ${c.threadId ?? ''}`.trim();
  if (c.scope === 'dm') {
    const person = c.participants?.find((p) => p.kind === 'user');
    return person === undefined ? `DM ${c.id}` : `DM with ${person.name}`;
  }
  return c.channelName === undefined ? name : `#${name}`;
}

export function conversationLink(id: string, label: string, hash?: string, at?: number): Html {
  return h`<a href="${href(['c', id], { at }, hash)}">${label}</a>`;
}

/** `1.2 s`, `340 ms`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** The line a page shows when the file predates agent runs. */
export const NO_RUNS = 'no agent runs recorded in this database';
