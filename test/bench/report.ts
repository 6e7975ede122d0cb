/** Latency figures of one measured operation, in milliseconds. */
export interface Latency {
  calls: number;
  p50: number;
  p99: number;
  /** Sum of the per-call times. */
  totalMs: number;
}

/** Percentiles (nearest rank) and total of per-call times in ms. */
export function latency(samples: ArrayLike<number>): Latency {
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] ?? 0;
  let totalMs = 0;
  for (const value of sorted) totalMs += value;
  return { calls: sorted.length, p50: at(0.5), p99: at(0.99), totalMs };
}

/** `12,345` */
export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** `0.021 ms`, `1.004 ms`, `12.3 ms`, `176 ms`: three decimals under 10 ms, so 1.004 never reads as 1.00. */
export function ms(value: number): string {
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 3;
  return `${value.toFixed(digits)} ms`;
}

/** `41,200/s` */
export function perSecond(count: number, totalMs: number): string {
  return `${int((count * 1000) / totalMs)}/s`;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** `p50 0.021 ms  p99 0.080 ms` */
export function percentiles(l: Latency): string {
  return `p50 ${ms(l.p50)}  p99 ${ms(l.p99)}`;
}

export function verdict(pass: boolean): 'PASS' | 'MISS' {
  return pass ? 'PASS' : 'MISS';
}

/**
 * One report line: label, our figure, the baseline measured in the same run, then the target
 * with its verdict.
 *
 * @example
 * ```ts
 * line('append', '41,200/s  p50 0.021 ms', 'raw insert 47,900/s', '86% of raw (target ≥ 80%) PASS');
 * ```
 */
export function line(label: string, figure: string, baseline: string, target = ''): string {
  const right = target === '' ? baseline : `${baseline.padEnd(40)} → ${target}`;
  return `${label.padEnd(22)}${figure.padEnd(40)}| ${right}`;
}

/** A line of context under a section (how it was measured, what was checked). */
export function note(text: string): string {
  return `  · ${text}`;
}

/** Peak resident set size of this process so far. */
export function peakRss(): string {
  return mib(process.resourceUsage().maxRSS * 1024);
}

/** Small deterministic PRNG (mulberry32), so every run measures the same data. */
export function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
