import { h } from './html.js';
import type { Html } from './html.js';

/** One bar of a stacked chart: its label and a value per series. */
export interface Column {
  label: string;
  values: Record<string, number>;
}

const WIDTH = 640;
const HEIGHT = 160;
const AXIS = 18;

/**
 * A stacked bar chart as inline SVG, drawn on the server: colours come from the stylesheet
 * (`.s0` … `.s7`), each segment has a `<title>` (its tooltip), and a legend follows in HTML.
 *
 * @example
 * ```ts
 * stackedBars('Turns per day', ['slack'], [{ label: '2026-03-16', values: { slack: 12 } }]);
 * ```
 */
export function stackedBars(
  title: string,
  series: readonly string[],
  columns: readonly Column[],
): Html {
  const totals = columns.map((c) => series.reduce((n, s) => n + (c.values[s] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const step = WIDTH / Math.max(1, columns.length);
  const barWidth = Math.max(2, step * 0.7);
  const plot = HEIGHT - AXIS;
  const bars = columns.map((column, i) => {
    let y = plot;
    const x = (i * step + (step - barWidth) / 2).toFixed(1);
    const segments = series.map((name, k) => {
      const value = column.values[name] ?? 0;
      if (value === 0) return h``;
      const height = (value / max) * (plot - 4);
      y -= height;
      return h`<rect class="s${k % 8}" x="${x}" y="${y.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${height.toFixed(1)}"><title>${column.label} · ${name}: ${value}</title></rect>`;
    });
    return h`<g>${segments}</g>`;
  });
  const first = columns[0]?.label ?? '';
  const last = columns.at(-1)?.label ?? '';
  return h`<figure class="chart"><figcaption>${title} <span class="dim">(max ${max})</span></figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}">
<line class="axis" x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}"></line>
${bars}
<text class="tick" x="0" y="${HEIGHT - 4}">${first}</text>
<text class="tick" x="${WIDTH}" y="${HEIGHT - 4}" text-anchor="end">${last}</text>
</svg>
<ul class="legend">${series.map((name, k) => h`<li><span class="swatch s${k % 8}"></span>${name}</li>`)}</ul></figure>`;
}
