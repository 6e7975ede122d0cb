/**
 * The studio's two static files, kept as text so the package needs no copy step and the
 * studio works offline: the stylesheet and the client script. The Content-Security-Policy
 * allows scripts and styles from the studio itself only, so neither may be inlined in a page.
 */

/**
 * The client script: live turns over server-sent events, new ones appended and edited or
 * deleted ones replaced (the server renders and escapes each turn; the script inserts that
 * markup as is), filter selects that submit on change, and
 * the newest turn in view on a transcript's first screen.
 */
export const STUDIO_JS = `'use strict';
(() => {
  const list = document.querySelector('[data-live]');
  if (list) {
    if (!location.hash) window.scrollTo(0, document.body.scrollHeight);
    const status = document.getElementById('live-status');
    let added = 0;
    const events = new EventSource(list.getAttribute('data-live'));
    events.addEventListener('turn', (event) => {
      const turn = JSON.parse(event.data);
      if (document.getElementById('m' + turn.seq)) return;
      const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
      list.insertAdjacentHTML('beforeend', turn.html);
      added += 1;
      if (status) status.textContent = 'live: ' + added + ' new ' + (added === 1 ? 'turn' : 'turns');
      if (nearBottom) window.scrollTo(0, document.body.scrollHeight);
    });
    events.addEventListener('change', (event) => {
      const turn = JSON.parse(event.data);
      const shown = document.getElementById('m' + turn.seq);
      if (shown) shown.outerHTML = turn.html;
    });
    events.addEventListener('open', () => {
      if (status) status.classList.add('connected');
    });
    events.addEventListener('error', () => {
      if (status) status.classList.remove('connected');
    });
  }
  for (const select of document.querySelectorAll('form.filters select')) {
    select.addEventListener('change', () => select.form.submit());
  }
})();
`;

export const STUDIO_CSS = `
:root { color-scheme: light dark; --fg: #1d232b; --dim: #66707c; --bg: #fff; --line: #d9dee4;
  --accent: #2f6fdb; --soft: #f3f5f8; --warn: #b3261e; --bot: #eef4ff; --other: #f6f1ff; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e8ee; --dim: #98a2ae; --bg: #14181d;
  --line: #2c333c; --accent: #7aa7ff; --soft: #1c2128; --warn: #ff8a80; --bot: #18233a; --other: #241c33; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 2rem; align-items: baseline; padding: .7rem 1.5rem; border-bottom: 1px solid var(--line); }
nav a { margin-right: 1rem; color: var(--dim); text-decoration: none; }
nav a[aria-current] { color: var(--fg); font-weight: 600; }
main { max-width: 980px; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
a { color: var(--accent); }
h1 { font-size: 1.4rem; margin: .8rem 0 .3rem; }
h2 { font-size: 1.1rem; margin-top: 2rem; }
.dim, .empty, .note { color: var(--dim); }
.note { font-size: .85rem; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
table.list { width: 100%; border-collapse: collapse; }
table.list th, table.list td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
form.filters { display: flex; gap: .5rem; flex-wrap: wrap; margin: .5rem 0 1rem; }
form.filters input[type=search] { flex: 1 1 18rem; }
input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
button { background: var(--accent); color: #fff; border: 0; cursor: pointer; }
ol.transcript, ol.hits, ol.prompt { list-style: none; padding: 0; }
.turn { padding: .5rem .7rem; margin: .35rem 0; border-radius: 8px; border: 1px solid var(--line); }
.turn:target, .turn.fresh { outline: 2px solid var(--accent); }
.kind-this-bot { background: var(--bot); }
.kind-another-bot { background: var(--other); }
.turn.summary { border-style: dashed; }
.turn.deleted .tombstone { color: var(--warn); font-style: italic; }
.turn .attachments { list-style: none; margin: 0.25rem 0 0; padding: 0; }
.meta { font-size: .85rem; color: var(--dim); display: flex; gap: .6rem; flex-wrap: wrap; align-items: baseline; }
.speaker { color: var(--fg); font-weight: 600; }
.badge { font-size: .75rem; padding: 0 .4rem; border-radius: 10px; background: var(--soft); border: 1px solid var(--line); color: var(--dim); }
.mark { font-size: .75rem; color: var(--dim); }
.mark.warn, .status-failed, .status-expired, .status-unconfirmed { color: var(--warn); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); padding: .5rem; border-radius: 6px; margin: .3rem 0; }
details { margin-top: .3rem; font-size: .9rem; }
summary { cursor: pointer; color: var(--dim); }
.runs a.run { display: inline-block; font-size: .8rem; margin-top: .3rem; margin-right: .5rem; }
a.thread { display: inline-block; font-size: .85rem; margin-top: .3rem; }
ol.hits li { padding: .4rem 0; border-bottom: 1px solid var(--line); }
a.hit { color: inherit; text-decoration: none; display: block; }
.where { color: var(--dim); font-size: .85rem; }
mark { background: #ffe58a; color: #000; border-radius: 2px; }
.live-status { color: var(--dim); font-size: .85rem; }
.live-status.connected::before { content: "● "; color: #2e9d4d; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--dim); }
dl.facts dd { margin: 0; }
form.danger { border: 1px solid var(--warn); border-radius: 8px; padding: .5rem 1rem 1rem; margin-top: 2rem; }
form.danger button { background: var(--warn); margin-top: .6rem; display: block; }
figure.chart { margin: 1.5rem 0; }
figure.chart svg { width: 100%; height: auto; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
.axis { stroke: var(--dim); }
.grid { stroke: var(--line); stroke-dasharray: 2 3; }
.tick { fill: var(--dim); font-size: 11px; }
.axis-title { fill: var(--dim); font-size: 12px; font-weight: 600; }
td .people { font-size: .85rem; color: var(--dim); margin-top: .15rem; }
td.last { max-width: 28rem; overflow-wrap: anywhere; font-size: .9rem; }
ul.legend { list-style: none; padding: 0; display: flex; gap: 1rem; font-size: .85rem; color: var(--dim); }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .3rem; vertical-align: -1px; }
.s0 { fill: #4e79a7; background: #4e79a7; } .s1 { fill: #f28e2b; background: #f28e2b; }
.s2 { fill: #59a14f; background: #59a14f; } .s3 { fill: #e15759; background: #e15759; }
.s4 { fill: #76b7b2; background: #76b7b2; } .s5 { fill: #edc948; background: #edc948; }
.s6 { fill: #b07aa1; background: #b07aa1; } .s7 { fill: #9c755f; background: #9c755f; }
`;
