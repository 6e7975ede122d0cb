import { formatBytes } from '../../src/attachments.js';
import { matchedSpans } from '../search.js';
import { h, href } from './html.js';
import type { Html } from './html.js';
import { count, duration, time } from './layout.js';
import type { RunRow, Turn } from './source.js';

/** Where a channel's threads start: the platform id of a thread's first turn → the thread. */
export type ThreadLinks = ReadonlyMap<string, { id: string; messageCount: number }>;

/**
 * A page of turns as `<li>` items: tool calls and results are folded under the reply of the
 * agent that made them (the next turn it wrote), or stand alone when that is not on the page.
 */
export function renderTurns(turns: readonly Turn[], threads: ThreadLinks = new Map()): Html {
  const items: Html[] = [];
  let tools: Turn[] = [];
  const flush = () => {
    if (tools.length > 0) items.push(h`<li class="turn tool-only">${toolGroup(tools)}</li>`);
    tools = [];
  };
  for (const turn of turns) {
    if (turn.tool !== undefined) {
      if (tools.length > 0 && tools[0]?.speakerId !== turn.speakerId) flush();
      tools.push(turn);
      continue;
    }
    const mine = tools.length > 0 && tools[0]?.speakerId === turn.speakerId ? tools : [];
    if (mine.length === 0) flush();
    else tools = [];
    items.push(renderTurn(turn, { tools: mine, threads }));
  }
  flush();
  return h`${items}`;
}

/** One turn: speaker and kind, time, reply link, text or tombstone, edits, runs, thread. */
export function renderTurn(
  turn: Turn,
  extra: { tools?: readonly Turn[]; threads?: ThreadLinks } = {},
): Html {
  const classes = [
    'turn',
    `kind-${turn.speakerKind.replace(' ', '-')}`,
    turn.deletedAt ? 'deleted' : '',
    turn.summaryFor !== undefined ? 'summary' : '',
  ].filter(Boolean);
  const thread =
    turn.platformMessageId === undefined ? undefined : extra.threads?.get(turn.platformMessageId);
  return h`<li class="${classes.join(' ')}" id="m${turn.seq}" data-seq="${turn.seq}">
<div class="meta"><span class="speaker" title="${turn.speakerId}">${turn.speakerName}</span>
<span class="badge">${turn.summaryFor !== undefined ? 'rolling summary' : turn.speakerKind}</span>
<a class="when" href="#m${turn.seq}">${time(turn.timestamp)}</a>
${turn.replyTo ? h`<a class="reply" href="${href(['c', turn.replyTo.conversationId], { at: turn.replyTo.seq }, `m${turn.replyTo.seq}`)}">↩ reply to ${turn.replyTo.speakerName}</a>` : ''}
${turn.editedAt ? h`<span class="mark">edited</span>` : ''}
${delegationMark(turn)}
${turn.interaction ? h`<span class="badge">${turn.interaction}</span>` : ''}
${turn.delivery && turn.delivery !== 'sent' ? h`<span class="mark warn">delivery: ${turn.delivery}</span>` : ''}
</div>
${body(turn)}
${attachments(turn)}
${turn.actions ? h`<div class="note">buttons: ${turn.actions.join(' · ')}</div>` : ''}
${revisions(turn)}
${turn.reasoning ? h`<details class="reasoning"><summary>the model's reasoning</summary><pre>${turn.reasoning}</pre></details>` : ''}
${extra.tools && extra.tools.length > 0 ? toolGroup(extra.tools) : ''}
${turn.runs.length > 0 ? h`<div class="runs">${turn.runs.map((run) => runBadge(run, turn))}</div>` : ''}
${thread ? h`<a class="thread" href="${href(['c', thread.id])}">thread · ${count(thread.messageCount, 'turn')} →</a>` : ''}
</li>`;
}

function delegationMark(turn: Turn): Html {
  const d = turn.delegation;
  if (d === undefined) return h``;
  if (d.answer) return h`<span class="badge">answer to the task from ${d.by ?? 'an agent'}</span>`;
  if (d.to !== undefined) return h`<span class="badge">delegated to ${d.to}</span>`;
  return h``;
}

function body(turn: Turn): Html {
  if (turn.deletedAt) {
    return h`<div class="tombstone">message deleted ${time(turn.deletedAt)}</div>
<details class="was"><summary>text before it was deleted</summary><div class="text">${turn.content}</div></details>`;
  }
  if (turn.summaryFor !== undefined) {
    return h`<div class="text">${turn.content}</div><div class="note">summary kept by ${turn.summaryFor}, not something anyone said</div>`;
  }
  return h`<div class="text">${turn.content}</div>`;
}

/** The turn's files by kind and name (the page links to none: nothing is fetched from it). */
function attachments(turn: Turn): Html {
  if (turn.attachments === undefined) return h``;
  return h`<ul class="attachments">${turn.attachments.map(
    (a) =>
      h`<li><span class="badge">${a.kind}</span> ${a.name ?? h`<span class="dim">no name</span>`}${a.mimeType ? h` <span class="dim">${a.mimeType}</span>` : ''}${a.size === undefined ? '' : h` <span class="dim">${formatBytes(a.size)}</span>`}</li>`,
  )}</ul>`;
}

function revisions(turn: Turn): Html {
  if (turn.revisions.length === 0) return h``;
  return h`<details class="revisions"><summary>edited ${time(turn.editedAt)} · ${count(turn.revisions.length, 'earlier version')}</summary>
<ol>${turn.revisions.map((r) => h`<li><span class="text">${r.content}</span> <span class="dim">(until ${time(r.replacedAt)})</span></li>`)}</ol></details>`;
}

function toolGroup(tools: readonly Turn[]): Html {
  const names = [...new Set(tools.map((t) => t.tool?.name ?? 'tool'))].join(', ');
  return h`<details class="tools"><summary>${count(tools.length, 'tool step')}: ${names}</summary>
<ol>${tools.map((t) => h`<li id="m${t.seq}"><span class="badge">${t.tool?.role ?? 'tool'} ${t.tool?.name ?? ''}</span> ${time(t.timestamp)}<pre>${t.content}</pre></li>`)}</ol></details>`;
}

/** `support-agent · answered · gpt-4o · 120+40 tokens · 1.2 s`, linking to what it saw. */
export function runBadge(run: RunRow, turn?: Turn): Html {
  const tokens =
    run.inputTokens === undefined && run.outputTokens === undefined
      ? ''
      : ` · ${run.inputTokens ?? 0}+${run.outputTokens ?? 0} tokens`;
  const role =
    turn === undefined ? '' : run.replyId === turn.id ? 'written by the run of ' : 'run of ';
  return h`<a class="run status-${run.status}" href="${href(['runs', run.id])}">${role}${run.agentId} · ${run.status}${run.model ? ` · ${run.model}` : ''}${tokens}${run.latencyMs === undefined ? '' : ` · ${duration(run.latencyMs)}`}</a>`;
}

/**
 * Text with the words of a search marked, compared the way the search index compares them
 * (`searchWords` + `wordKey`: case and Latin accents folded). Everything else is escaped.
 */
export function highlight(text: string, query: string): Html {
  const parts: Html[] = [];
  let last = 0;
  for (const { start, end } of matchedSpans(text, query)) {
    parts.push(h`${text.slice(last, start)}<mark>${text.slice(start, end)}</mark>`);
    last = end;
  }
  parts.push(h`${text.slice(last)}`);
  return h`${parts}`;
}
