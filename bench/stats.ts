// Small numeric helpers shared by the benchmark modules: percentiles and the
// formatting of figures for the results table.

export interface PhaseStats {
  requests: number;
  perSec: number;
  p50ms: number;
  p99ms: number;
}

/** Sorts `latencies` in place and summarises them over `elapsedMs` of wall time. */
export function summarise(latencies: Float64Array, elapsedMs: number): PhaseStats {
  latencies.sort();
  const n = latencies.length;
  const at = (q: number) => (n === 0 ? 0 : latencies[Math.min(n - 1, Math.floor(n * q))]!);
  return { requests: n, perSec: n / (elapsedMs / 1000), p50ms: at(0.5), p99ms: at(0.99) };
}

/** The middle value (the upper of the two middle ones for an even count). */
/** The `q` quantile of sorted values (NaN when there are none). */
export function percentile(sorted: Float64Array, q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');

export function fmtMs(ms: number): string {
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** Server CPU per request: microseconds below a tenth of a millisecond, where two decimals of a millisecond say too little. */
export function fmtCpu(ms: number): string {
  return ms < 0.1 ? `${(ms * 1000).toFixed(1)} µs` : fmtMs(ms);
}

export const fmtMB = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
