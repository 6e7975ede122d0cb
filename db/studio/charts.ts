import { h } from './html.js';
import type { Html } from './html.js';

/** One bar of a stacked chart: its label and a value per series. */
export interface Column {
  label: string;
  values: Record<string, number>;
}

/** What the axes say: what a bar is (`day`, `agent`) and what its height counts (`turns`). */
export interface Axes {
  x: string;
  y: string;
}

const WIDTH = 640;
const HEIGHT = 200;
/** Room for the y axis's numbers and title, and for the x axis's labels and title. */
const LEFT = 56;
const BOTTOM = 40;
const TOP = 10;
const RIGHT = 32;
/** About how wide a character of a tick label is, to leave labels room of their own. */
const CHAR_WIDTH = 7.5;

/**
 * A stacked bar chart as inline SVG, drawn on the server: a y axis with round numbers and
 * grid lines, an x axis labelled under its bars (every few bars, the last included, when
 * they are many), each
 * axis titled, colours from the stylesheet (`.s0` … `.s7`), a `<title>` per segment (its
 * tooltip), and a legend in HTML.
 *
 * @example
 * ```ts
 * stackedBars('Turns per day', ['slack'], [{ label: '2026-03-16', values: { slack: 12 } }], {
 *   x: 'day',
 *   y: 'turns',
 * });
 * ```
 */
export function stackedBars(
  title: string,
  series: readonly string[],
  columns: readonly Column[],
  axes: Axes,
): Html {
  const totals = columns.map((c) => series.reduce((n, s) => n + (c.values[s] ?? 0), 0));
  const ticks = yTicks(Math.max(0, ...totals));
  const top = ticks.at(-1) ?? 1;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const bottom = HEIGHT - BOTTOM;
  const plotHeight = bottom - TOP;
  const y = (value: number) => bottom - (value / top) * plotHeight;
  const step = plotWidth / Math.max(1, columns.length);
  const barWidth = Math.max(2, step * 0.7);
  const bars = columns.map((column, i) => {
    let base = 0;
    const x = (LEFT + i * step + (step - barWidth) / 2).toFixed(1);
    const segments = series.map((name, k) => {
      const value = column.values[name] ?? 0;
      if (value === 0) return h``;
      const y1 = y(base + value);
      const height = y(base) - y1;
      base += value;
      return h`<rect class="s${k % 8}" x="${x}" y="${y1.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${height.toFixed(1)}"><title>${column.label} · ${name}: ${value}</title></rect>`;
    });
    return h`<g>${segments}</g>`;
  });
  const grid = ticks.map(
    (
      tick,
    ) => h`<line class="grid" x1="${LEFT}" y1="${y(tick).toFixed(1)}" x2="${WIDTH - RIGHT}" y2="${y(tick).toFixed(1)}"></line>
<text class="tick y-tick" x="${LEFT - 6}" y="${(y(tick) + 4).toFixed(1)}" text-anchor="end">${tick.toLocaleString('en-US')}</text>`,
  );
  const longest = Math.max(1, ...columns.map((c) => c.label.length));
  const every = Math.max(1, Math.ceil((longest * CHAR_WIDTH + 12) / step));
  // Counted from the last bar, so the newest day is always labelled.
  const labels = columns.map((column, i) => {
    if ((columns.length - 1 - i) % every !== 0) return h``;
    // Centred under its bar, or flush with the plot's edge where it would run past it.
    const centre = LEFT + i * step + step / 2;
    const half = (column.label.length * CHAR_WIDTH) / 2;
    const [x, anchor] =
      centre + half > WIDTH - RIGHT
        ? [WIDTH - RIGHT, 'end']
        : centre - half < LEFT
          ? [LEFT, 'start']
          : [centre, 'middle'];
    return h`<text class="tick x-tick" x="${x.toFixed(1)}" y="${bottom + 14}" text-anchor="${anchor}">${column.label}</text>`;
  });
  return h`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}: ${axes.y} per ${axes.x}">
${grid}
${bars}
<line class="axis" x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${bottom}"></line>
<line class="axis" x1="${LEFT}" y1="${bottom}" x2="${WIDTH - RIGHT}" y2="${bottom}"></line>
${labels}
<text class="axis-title" x="${LEFT + plotWidth / 2}" y="${HEIGHT - 4}" text-anchor="middle">${axes.x}</text>
<text class="axis-title" x="12" y="${TOP + plotHeight / 2}" text-anchor="middle" transform="rotate(-90 12 ${TOP + plotHeight / 2})">${axes.y}</text>
</svg>
<ul class="legend">${series.map((name, k) => h`<li><span class="swatch s${k % 8}"></span>${name}</li>`)}</ul></figure>`;
}

/**
 * The y axis's marks: from 0 in round steps (1, 2 or 5 times a power of ten) to the first
 * mark at or above `max`, about four of them.
 *
 * @example
 * ```ts
 * yTicks(37); // [0, 10, 20, 30, 40]
 * yTicks(0); // [0, 1]
 * ```
 */
export function yTicks(max: number): number[] {
  if (max <= 0) return [0, 1];
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const whole = Math.max(1, Math.round(step));
  const ticks = [0];
  while ((ticks.at(-1) ?? 0) < max) ticks.push((ticks.at(-1) ?? 0) + whole);
  return ticks;
}
