import { stackedBars } from './charts.js';
import type { Column } from './charts.js';
import { h, href } from './html.js';
import type { Html } from './html.js';
import {
  conversationLink,
  conversationName,
  count,
  duration,
  layout,
  NO_RUNS,
  time,
} from './layout.js';
import { promptOf } from './prompt.js';
import type { ConversationListRow, StudioSource } from './source.js';
import { highlight, renderTurns, runBadge } from './turns.js';

/** Turns on one transcript screen. */
export const TRANSCRIPT_PAGE = 100;
const LIST_PAGE = 50;

/** Query parameters as the server hands them over (missing ones undefined). */
export type Params = Record<string, string | undefined>;

/** The conversation list with its filters, or search hits when `q` is given. */
export async function conversationsPage(source: StudioSource, params: Params): Promise<Html> {
  const [platforms, people] = await Promise.all([source.platforms(), source.participants(500)]);
  const form = h`<form class="filters" method="get" action="/">
<input type="search" name="q" value="${params.q ?? ''}" placeholder="search every conversation" aria-label="search">
<select name="platform" aria-label="platform"><option value="">all platforms</option>${platforms.map((p) => h`<option${p === params.platform ? h` selected` : ''}>${p}</option>`)}</select>
<input name="participant" list="people" value="${params.participant ?? ''}" placeholder="participant id" aria-label="participant">
<datalist id="people">${people.map((p) => h`<option value="${p.id}">${p.displayName ?? p.id}</option>`)}</datalist>
<button>Show</button></form>`;
  if (params.q !== undefined && params.q.trim() !== '') {
    const hits = await source.search(params.q, 50);
    // Each conversation as the list names it (a DM by its person), read once per conversation.
    const ids = [...new Set(hits.map((hit) => hit.conversationId))];
    const found = await Promise.all(ids.map((id) => source.conversation(id)));
    const names = new Map(
      found.flatMap((c) => (c === undefined ? [] : [[c.id, conversationName(c)]])),
    );
    const list =
      hits.length === 0
        ? h`<p class="empty">nothing found for “${params.q}”</p>`
        : h`<ol class="hits">${hits.map(
            (
              hit,
            ) => h`<li><a class="hit" href="${href(['c', hit.conversationId], { at: hit.seq }, `m${hit.seq}`)}">
<span class="where">${hit.platform} · ${names.get(hit.conversationId) ?? hit.conversationName}</span> ${time(hit.timestamp)} <strong>${hit.speakerName}</strong>:
<span class="text">${highlight(hit.content, params.q ?? '')}</span></a></li>`,
          )}</ol>`;
    return layout(`Search: ${params.q}`, h`${form}<h1>Search “${params.q}”</h1>${list}`, '/');
  }
  const page = await source.conversations({
    limit: LIST_PAGE,
    ...(params.platform ? { platform: params.platform } : {}),
    ...(params.participant ? { participant: params.participant } : {}),
    ...(params.after ? { after: params.after } : {}),
  });
  const rows = page.items.map(
    (c) => h`<tr><td>${c.platform}</td><td>${conversationLink(c.id, conversationName(c))}
<div class="people">${peopleOf(c)}</div></td>
<td class="last">${lastTurnOf(c)}</td><td>${c.scope}</td><td class="num">${c.messageCount}</td><td>${time(c.lastMessageAt)}</td></tr>`,
  );
  const table =
    rows.length === 0
      ? h`<p class="empty">${params.platform || params.participant ? 'no conversations match' : 'no conversations yet'}</p>`
      : h`<table class="list"><thead><tr><th>platform</th><th>conversation and people</th><th>last message</th><th>scope</th><th>turns</th><th>last activity</th></tr></thead><tbody>${rows}</tbody></table>`;
  const next = page.next
    ? h`<p><a href="${href([], { platform: params.platform, participant: params.participant, after: page.next })}">older conversations →</a></p>`
    : '';
  return layout('Conversations', h`${form}<h1>Conversations</h1>${table}${next}`, '/');
}

/** Who wrote in a conversation, people first, linked to their page; bots marked. */
function peopleOf(c: ConversationListRow): Html {
  const names = c.participants.map(
    (p) =>
      h`<a href="${href(['people', p.id])}" title="${p.id}">${p.name}</a>${p.kind === 'user' ? '' : h` <span class="dim">(${p.kind})</span>`}`,
  );
  const more =
    c.moreParticipants === 0 ? '' : h`, <span class="dim">+${c.moreParticipants} more</span>`;
  return h`${names.map((name, i) => (i === 0 ? name : h`, ${name}`))}${more}`;
}

/** The newest turn people saw, as one escaped line. */
function lastTurnOf(c: ConversationListRow): Html {
  const turn = c.lastTurn;
  if (turn === undefined) return h`<span class="dim">no turns yet</span>`;
  if (turn.deleted)
    return h`<strong>${turn.speakerName}</strong>: <span class="dim">message deleted</span>`;
  return h`<strong>${turn.speakerName}</strong>: ${turn.preview}`;
}

/** One conversation as people saw it, newest screen first; live when on the newest screen. */
export async function transcriptPage(
  source: StudioSource,
  id: string,
  params: Params,
): Promise<Html | undefined> {
  const conversation = await source.conversation(id);
  if (conversation === undefined) return undefined;
  const at = params.at === undefined ? undefined : Number(params.at);
  const newest = params.before === undefined && params.at === undefined;
  // Taken before the page is read, so no turn committed meanwhile is missed by the live feed.
  const last = newest ? await source.liveCursor() : '';
  const page = await source.turns(id, {
    limit: TRANSCRIPT_PAGE,
    ...(params.before ? { before: params.before } : {}),
    ...(at !== undefined && Number.isInteger(at) ? { around: at } : {}),
  });
  const threads = new Map(conversation.threads.map((t) => [t.rootMessageId, t]));
  const name = conversationName(conversation);
  const head = h`<h1>${name}</h1>
<p class="dim">${conversation.platform} · ${conversation.scope} · ${count(conversation.messageCount, 'turn')} · ${conversation.id}
${conversation.parentId ? h` · in ${conversationLink(conversation.parentId, 'the channel')}` : ''}</p>
${page.earlier ? h`<p><a href="${href(['c', id], { before: page.earlier })}">← earlier turns</a></p>` : ''}`;
  const live = newest
    ? h`<ol class="transcript" id="turns" data-live="${href(['events'], { c: id, after: last })}">`
    : h`<ol class="transcript" id="turns">`;
  const foot = newest
    ? h`<p class="live-status" id="live-status">live: new turns appear here</p>`
    : h`<p><a href="${href(['c', id])}">newest turns →</a></p>`;
  return layout(name, h`${head}${live}${renderTurns(page.turns, threads)}</ol>${foot}`, '');
}

/** Runs, newest first, and the turns addressed to the bot that got no answer. */
export async function runsPage(source: StudioSource, params: Params): Promise<Html> {
  const [runs, unanswered] = await Promise.all([
    source.runs({
      limit: 200,
      ...(params.agent ? { agent: params.agent } : {}),
      ...(params.status ? { status: params.status } : {}),
    }),
    source.unanswered(100),
  ]);
  const statuses = ['', 'pending', 'running', 'answered', 'failed', 'expired', 'unconfirmed'];
  // A file with the table but no rows yet (the bot has not answered anything) reads the same.
  const none = runs === undefined || (runs.length === 0 && !params.agent && !params.status);
  const runList = none
    ? h`<p class="empty">${NO_RUNS}</p>`
    : runs.length === 0
      ? h`<p class="empty">no runs match</p>`
      : h`<table class="list"><thead><tr><th>created</th><th>agent</th><th>status</th><th>model</th><th>tokens in/out</th><th>latency</th><th>conversation</th><th></th></tr></thead><tbody>${runs.map(
          (
            r,
          ) => h`<tr class="status-${r.status}"><td>${time(r.createdAt)}</td><td>${r.agentId}</td><td>${r.status}${r.error ? h` <span class="dim" title="${r.error}">(${r.error.slice(0, 60)})</span>` : ''}</td>
<td>${r.model ?? ''}</td><td class="num">${r.inputTokens ?? ''} / ${r.outputTokens ?? ''}</td><td class="num">${duration(r.latencyMs)}</td>
<td>${conversationLink(r.conversationId, r.conversationId)}</td><td><a href="${href(['runs', r.id])}">what it saw</a></td></tr>`,
        )}</tbody></table>`;
  const filters = h`<form class="filters" method="get" action="/runs">
<input name="agent" value="${params.agent ?? ''}" placeholder="agent id" aria-label="agent">
<select name="status" aria-label="status">${statuses.map((s) => h`<option value="${s}"${s === (params.status ?? '') ? h` selected` : ''}>${s || 'any status'}</option>`)}</select>
<button>Show</button></form>`;
  const missed =
    unanswered.length === 0
      ? h`<p class="empty">every turn that mentioned or replied to the bot got a reply</p>`
      : h`<ol class="hits">${unanswered.map(
          (
            t,
          ) => h`<li><a href="${href(['c', t.conversationId], { at: t.seq }, `m${t.seq}`)}">${time(t.timestamp)} <strong>${t.speakerName}</strong> in ${t.conversationId}: <span class="text">${t.content}</span></a>
${t.runs.map((r) => runBadge(r))}</li>`,
        )}</ol>`;
  return layout(
    'Agent runs',
    h`<h1>Agent runs</h1>${filters}${runList}
<h2 id="unanswered">Addressed to the bot, no answer</h2>
<p class="dim">Turns that mention one of the bot's agents (or a bot id they answered to) or reply to one, with no reply from it${runs === undefined ? '' : ' and no answered run'}.</p>${missed}`,
    '/runs',
  );
}

/** One run and what its agent saw. */
export async function runPage(source: StudioSource, id: string): Promise<Html | undefined> {
  const run = await source.run(id);
  if (run === undefined) return undefined;
  const prompt = await promptOf(source, run);
  const facts: [string, Html | string][] = [
    ['agent', run.agentId],
    ['status', run.status],
    ['model', run.model ?? ''],
    ['tokens in / out', `${run.inputTokens ?? '–'} / ${run.outputTokens ?? '–'}`],
    ['latency', duration(run.latencyMs)],
    ['created', time(run.createdAt)],
    ['started', time(run.startedAt)],
    ['finished', time(run.finishedAt)],
    ['attempts', String(run.attempts ?? '')],
    ['error', run.error ?? ''],
    ['conversation', conversationLink(run.conversationId, run.conversationId)],
  ];
  const inbound = run.inbound
    ? h`<ol class="transcript">${renderTurns([run.inbound])}</ol>`
    : h`<p class="empty">the inbound turn is no longer stored</p>`;
  const messages = prompt.messages.map(
    (m) =>
      h`<li class="prompt-${m.role}"><div class="meta"><span class="badge">${m.role}</span>${m.tokens === undefined ? '' : h` <span class="dim">${count(m.tokens, 'token')}</span>`}</div><pre>${m.content}</pre></li>`,
  );
  const budget =
    prompt.tokens === undefined
      ? ''
      : h`<p><strong>${count(prompt.tokens, 'token')}</strong>${prompt.budget === undefined ? '' : ` of a ${prompt.budget}-token budget`} (the system prompt is outside the budget)</p>`;
  return layout(
    `Run ${run.id}`,
    h`<h1>Run ${run.id}</h1>
<dl class="facts">${facts.map(([k, v]) => h`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
<h2>The turn it answered</h2>${inbound}
<h2>What the agent saw <span class="badge">${prompt.source}</span></h2>
<ul class="notes">${prompt.notes.map((n) => h`<li>${n}</li>`)}</ul>${budget}
${prompt.raw === undefined ? '' : h`<pre>${JSON.stringify(prompt.raw, null, 2)}</pre>`}
<ol class="prompt">${messages}</ol>`,
    '/runs',
  );
}

/** Small charts: turns per day per platform, answers and failures per agent, tokens per day. */
export async function overviewPage(source: StudioSource): Promise<Html> {
  const o = await source.overview(30);
  const columns = <T>(
    rows: T[],
    key: (row: T) => string,
    value: (row: T) => number,
    series: (row: T) => string,
  ): Column[] =>
    o.days.map((day) => ({
      label: day,
      values: Object.fromEntries(
        rows.filter((r) => key(r) === day).map((r) => [series(r), value(r)]),
      ),
    }));
  const platforms = [...new Set(o.turnsPerDay.map((r) => r.platform))];
  const turns = stackedBars(
    'Turns per day, by platform (30 days to the newest turn)',
    platforms,
    columns(
      o.turnsPerDay,
      (r) => r.day,
      (r) => r.turns,
      (r) => r.platform,
    ),
    { x: 'day (UTC)', y: 'turns' },
  );
  let runs: Html;
  if (o.runsPerAgent === undefined || o.tokensPerDay === undefined || o.runsPerAgent.length === 0) {
    runs = h`<p class="empty">${NO_RUNS}</p>`;
  } else {
    const answers = stackedBars(
      'Runs per agent: answered, failed (failed, expired, unconfirmed), other',
      ['answered', 'failed', 'other'],
      o.runsPerAgent.map((r) => ({
        label: r.agentId,
        values: { answered: r.answered, failed: r.failed, other: r.other },
      })),
      { x: 'agent', y: 'runs' },
    );
    const agents = [...new Set(o.tokensPerDay.map((r) => r.agentId))];
    const tokens = stackedBars(
      'Tokens per day, by agent (input + output)',
      agents,
      columns(
        o.tokensPerDay,
        (r) => r.day,
        (r) => r.tokens,
        (r) => r.agentId,
      ),
      { x: 'day (UTC)', y: 'tokens' },
    );
    runs = h`${answers}${tokens}`;
  }
  return layout(
    'Overview',
    h`<h1>Overview</h1><p>${count(o.totals.conversations, 'conversation')} · ${count(o.totals.turns, 'turn')} · ${count(o.totals.participants, 'participant')}</p>${turns}${runs}`,
    '/overview',
  );
}

/** Everyone who wrote a turn, newest first. */
export async function peoplePage(source: StudioSource): Promise<Html> {
  const people = await source.participants(500, { counts: true });
  return layout(
    'People',
    h`<h1>People</h1><table class="list"><thead><tr><th>name</th><th>id</th><th>kind</th><th>turns</th><th>last seen</th></tr></thead><tbody>${people.map(
      (p) =>
        h`<tr><td><a href="${href(['people', p.id])}">${p.displayName ?? p.id}</a></td><td>${p.id}</td><td>${p.kind}</td><td class="num">${p.messages}</td><td>${time(p.lastSeenAt)}</td></tr>`,
    )}</tbody></table>`,
    '/people',
  );
}

/**
 * A participant, their conversations, and (with `--write`) the confirmation that names
 * everything forgetting them deletes.
 */
export async function personPage(
  source: StudioSource,
  id: string,
  csrf: string,
): Promise<Html | undefined> {
  const p = await source.participant(id);
  if (p === undefined) return undefined;
  const page = await source.conversations({ participant: id, limit: LIST_PAGE });
  const name = p.displayName ?? p.id;
  const what = `${count(p.messages, 'turn')} by ${name} (${p.id}) in ${count(p.conversations, 'conversation')}, their ${count(p.revisions, 'earlier version')} of edited turns, ${count(p.mentions, 'mention')} of them, the reply links to them, their name, and the ${count(p.summaries, 'rolling summary', 'rolling summaries')} of those conversations`;
  const forget = source.writable
    ? h`<form class="danger" method="post" action="${href(['people', p.id, 'forget'])}">
<h2>Forget ${name}</h2>
<p>This deletes <strong>${what}</strong>. What others wrote about them stays. It cannot be undone.</p>
<input type="hidden" name="csrf" value="${csrf}">
<label><input type="checkbox" name="confirm" value="${p.id}" required> I want to delete everything listed above for ${p.id}</label>
<button>Delete ${count(p.messages, 'turn')}</button></form>`
    : h`<p class="dim">To forget this person from the page, start the studio with <code>--write</code> (or run <code>colloquy forget ${p.id}</code>).</p>`;
  return layout(
    name,
    h`<h1>${name}</h1><p class="dim">${p.id} · ${p.kind} · ${count(p.messages, 'turn')} · last seen ${time(p.lastSeenAt)}</p>
<ul>${page.items.map((c) => h`<li>${conversationLink(c.id, conversationName(c))} <span class="dim">${c.platform} · ${count(c.messageCount, 'turn')}</span></li>`)}</ul>${forget}`,
    '/people',
  );
}
