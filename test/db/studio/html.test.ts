import { describe, expect, it } from 'vitest';
import { escapeHtml, h, href, trusted } from '../../../db/studio/html.js';
import { yTicks } from '../../../db/studio/charts.js';
import { highlight } from '../../../db/studio/turns.js';

describe('studio html', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    expect(escapeHtml(`<img src=x onerror=alert(1)> & "q" 'a'`)).toBe(
      '&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot; &#39;a&#39;',
    );
  });

  it('escapes every interpolated value, nested lists included, and keeps markup built by h', () => {
    const name = '"><script>alert(1)</script>';
    const out = h`<p title="${name}">${[name, [h`<b>${name}</b>`]]}${null}${false}${3}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).toContain('<b>&quot;&gt;&lt;script&gt;');
    expect(out).toContain('3</p>');
    expect(h`${trusted('<hr>')}`.value).toBe('<hr>');
  });

  it('builds local links with every segment and value encoded', () => {
    expect(href(['c', 'slack:T1:C1/../x'], { before: 'a|1', at: undefined }, 'm3')).toBe(
      '/c/slack%3AT1%3AC1%2F..%2Fx?before=a%7C1#m3',
    );
  });

  it('marks the searched words as the index folds them, escaping the rest', () => {
    expect(highlight('<b>Café</b> cafe CAFES', 'cafe').value).toBe(
      '&lt;b&gt;<mark>Café</mark>&lt;/b&gt; <mark>cafe</mark> CAFES',
    );
  });

  it("numbers a chart's y axis from 0 in round steps past the highest bar", () => {
    expect(yTicks(37)).toEqual([0, 10, 20, 30, 40]);
    expect(yTicks(3)).toEqual([0, 1, 2, 3]);
    expect(yTicks(1234)).toEqual([0, 500, 1000, 1500]);
    expect(yTicks(0)).toEqual([0, 1]);
  });
});
