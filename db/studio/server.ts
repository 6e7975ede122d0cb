import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { STUDIO_CSS, STUDIO_JS } from './assets.js';
import { h } from './html.js';
import type { Html } from './html.js';
import { layout } from './layout.js';
import { LiveFeed, serialized, TurnWatch } from './live.js';
import {
  conversationsPage,
  overviewPage,
  peoplePage,
  personPage,
  runPage,
  runsPage,
  transcriptPage,
} from './pages.js';
import type { StudioSource } from './source.js';
import { renderTurn } from './turns.js';

export interface StudioOptions {
  source: StudioSource;
  /** The access token every request must carry (default: 32 random bytes). */
  token?: string;
  /** How often the live feed looks for changes (default 500 ms). */
  pollMs?: number;
  /**
   * The `host:port` values the Host header may name; others are refused (DNS rebinding).
   * Unset: any (the token still guards every request).
   */
  allowedHosts?: () => readonly string[];
}

/**
 * Every response: a strict Content-Security-Policy (scripts, styles and connections to the
 * studio itself only, no inline script or style, no frames, forms post only here), no
 * caching, no referrer, no sniffing.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const COOKIE = 'colloquy_studio';

/**
 * The studio's Hono app. Every request is checked against the token: `?token=` on the first
 * visit (answered with a cookie, and a redirect to the same address without the token), then
 * the cookie (`HttpOnly`, `SameSite=Strict`), or `Authorization: Bearer <token>` for scripts.
 * The one write (forget) is a POST carrying a CSRF value derived from the token, from this
 * origin only.
 *
 * @example
 * ```ts
 * const { app, token } = createStudioApp({ source });
 * const response = await app.request(`/?token=${token}`);
 * ```
 */
export function createStudioApp(options: StudioOptions) {
  const token = options.token ?? randomBytes(32).toString('base64url');
  const csrf = createHmac('sha256', token).update('colloquy studio forget').digest('base64url');
  const feed = new LiveFeed(options.source, options.pollMs ?? 500);
  const source = options.source;
  const app = new Hono();

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });

  app.use('*', async (c, next) => {
    const allowed = options.allowedHosts?.();
    if (allowed !== undefined && !allowed.includes(c.req.header('host') ?? '')) {
      return c.text('colloquy studio: unexpected Host header', 421);
    }
    const given = c.req.query('token');
    if (given !== undefined && same(given, token)) {
      setCookie(c, COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      const url = new URL(c.req.url);
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
    const presented = bearer ?? getCookie(c, COOKIE);
    if (presented === undefined || !same(presented, token)) {
      return c.text(
        'colloquy studio: open the address `colloquy studio` printed (it carries the access token)',
        401,
      );
    }
    await next();
  });

  const page = (c: Context, html: Html | undefined) =>
    html === undefined ? notFound(c) : c.html(html.value);

  app.get('/assets/studio.js', (c) =>
    c.body(STUDIO_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }),
  );
  app.get('/assets/studio.css', (c) =>
    c.body(STUDIO_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }),
  );
  app.get('/', async (c) => page(c, await conversationsPage(source, c.req.query())));
  app.get('/c/:id', async (c) =>
    page(c, await transcriptPage(source, c.req.param('id'), c.req.query())),
  );
  app.get('/runs', async (c) => page(c, await runsPage(source, c.req.query())));
  app.get('/runs/:id', async (c) => page(c, await runPage(source, c.req.param('id'))));
  app.get('/overview', async (c) => page(c, await overviewPage(source)));
  app.get('/people', async (c) => page(c, await peoplePage(source)));
  app.get('/people/:id', async (c) => page(c, await personPage(source, c.req.param('id'), csrf)));

  app.post('/people/:id/forget', async (c) => {
    const id = c.req.param('id');
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== new URL(c.req.url).origin) {
      return c.text('colloquy studio: cross-origin request refused', 403);
    }
    const form = await c.req.parseBody();
    if (typeof form['csrf'] !== 'string' || !same(form['csrf'], csrf)) {
      return c.text('colloquy studio: missing or wrong form token; reload the page', 403);
    }
    if (!source.writable) {
      return c.text('colloquy studio: started without --write; nothing was deleted', 403);
    }
    if (form['confirm'] !== id) {
      return c.text('colloquy studio: tick the confirmation naming this participant', 400);
    }
    const deleted = await source.forget(id);
    return c.html(
      layout(
        'Forgotten',
        h`<h1>Forgotten</h1><p>Deleted ${deleted} ${deleted === 1 ? 'turn' : 'turns'} by ${id}, and what went with them.</p><p><a href="/people">People</a></p>`,
        '/people',
      ).value,
    );
  });

  app.get('/api/conversations', async (c) => {
    const q = c.req.query();
    return c.json(
      await source.conversations({
        limit: Math.min(Number(q.limit ?? 50) || 50, 500),
        ...(q.platform ? { platform: q.platform } : {}),
        ...(q.participant ? { participant: q.participant } : {}),
        ...(q.after ? { after: q.after } : {}),
      }),
    );
  });
  app.get('/api/c/:id/turns', async (c) => {
    const q = c.req.query();
    return c.json(
      await source.turns(c.req.param('id'), {
        limit: Math.min(Number(q.limit ?? 100) || 100, 1000),
        ...(q.before ? { before: q.before } : {}),
      }),
    );
  });

  // Live turns of one conversation: each event is one turn rendered (and escaped) here.
  app.get('/events', (c) => {
    const conversationId = c.req.query('c');
    const after = c.req.query('after') ?? '';
    return streamSSE(c, async (stream) => {
      const watch = new TurnWatch(source, after, conversationId);
      await watch.start();
      const send = serialized(async () => {
        for (const event of await watch.changes()) {
          if (stream.aborted) return;
          await stream.writeSSE({
            event: event.kind,
            data: JSON.stringify({ seq: event.turn.seq, html: renderTurn(event.turn).value }),
          });
        }
      });
      const unsubscribe = feed.subscribe(() => void send().catch(() => stream.abort()));
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      unsubscribe();
    });
  });

  app.notFound((c) => notFound(c));
  app.onError((error, c) => {
    console.error(error);
    return c.text(`colloquy studio: ${error.message}`, 500);
  });

  return { app, token, csrf, feed };
}

function notFound(c: Context) {
  return c.html(
    layout('Not found', h`<h1>Not found</h1><p><a href="/">Conversations</a></p>`, '').value,
    404,
  );
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A running studio: its address (with the token) and how to stop it. */
export interface RunningStudio {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/**
 * Serves the studio on `host:port` (port 0: any free one). Bound to 127.0.0.1 by default;
 * the Host header must then name the loopback address it was reached by.
 *
 * @example
 * ```ts
 * const studio = await startStudio({ source, port: 0 });
 * console.log(studio.url); // http://127.0.0.1:54321/?token=…
 * await studio.close();
 * ```
 */
export async function startStudio(
  options: StudioOptions & { host?: string; port?: number },
): Promise<RunningStudio> {
  const host = options.host ?? '127.0.0.1';
  let port = options.port ?? 0;
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const { app, token, feed } = createStudioApp({
    ...options,
    ...(loopback
      ? { allowedHosts: () => [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`] }
      : {}),
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', reject);
  });
  port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        feed.stop();
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
