// One series of a prom-client histogram or counter, kept by whoever observes
// it so that an observation on the request path costs a few additions.
// prom-client's own children (`histogram.labels(...)`) check and hash every
// label on every observation (about 0.7 µs each, and a create makes a dozen).
// A series here finds prom-client's value object once, through prom-client's
// own first observation (which checks the labels), then updates it in place:
// prom-client still holds every value and writes the exposition, so /metrics
// reads exactly as before. Should a prom-client release keep its values some
// other way, the series is not found and every observation takes prom-client's
// road (slower, never wrong); test/unit/machinery/metricseries.test.ts notices.

import type { Counter, Histogram, LabelValues } from 'prom-client';

/** What prom-client keeps for one labelled series (15.x): its labels object, and its numbers. */
interface HistogramValues { labels: object; sum: number; count: number; bucketValues: Record<string, number> }
interface CounterValue { labels: object; value: number }
/** prom-client's per-metric map from a labels hash to the series' values; replaced by reset(). */
interface Internals<V> { hashMap: Record<string, V> }

/**
 * The series of these labels: prom-client keeps the labels object of the
 * observation that made the series, which is this one unless an earlier
 * holder of the same labels (a restarted queue's) made it.
 */
function findValues<V extends { labels: object }>(metric: Internals<V>, labels: LabelValues<string>): V | undefined {
  const values = Object.values(metric.hashMap);
  for (const v of values) if (v.labels === labels) return v;
  const names = Object.keys(labels);
  return values.find((v) => {
    const other = v.labels as LabelValues<string>;
    return Object.keys(other).length === names.length && names.every((n) => Object.hasOwn(other, n) && other[n] === labels[n]);
  });
}

/** Observes one labelled series of a histogram. */
export class HistogramSeries {
  private values: HistogramValues | undefined;
  private map: object | undefined;
  private readonly bounds: readonly number[];
  /** The bucket keys prom-client uses (its bounds as property names), made once. */
  private readonly keys: readonly string[];

  constructor(private readonly histogram: Histogram, private readonly labels: LabelValues<string>) {
    this.bounds = (histogram as unknown as { upperBounds: number[] }).upperBounds ?? [];
    this.keys = this.bounds.map(String);
  }

  observe(value: number): void {
    const internals = this.histogram as unknown as Internals<HistogramValues>;
    const values = this.values;
    // Not found yet, or the metric was reset since: prom-client's road, which (re)creates the series.
    if (values === undefined || this.map !== internals.hashMap || !Number.isFinite(value)) {
      this.histogram.observe(this.labels, value);
      this.map = internals.hashMap;
      this.values = findValues(internals, this.labels);
      return;
    }
    values.sum += value;
    values.count += 1;
    // As prom-client: the first bound the value does not exceed; beyond the last, only +Inf (the count).
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        values.bucketValues[this.keys[i]!]! += 1;
        return;
      }
    }
  }

  /** Whether observations take the fast road (the series was found): for the test that watches prom-client's internals. */
  get direct(): boolean {
    return this.values !== undefined;
  }
}

/** Increments one labelled series of a counter. */
export class CounterSeries {
  private value: CounterValue | undefined;
  private map: object | undefined;

  constructor(private readonly counter: Counter, private readonly labels: LabelValues<string>) {}

  inc(by = 1): void {
    const internals = this.counter as unknown as Internals<CounterValue>;
    const value = this.value;
    if (value === undefined || this.map !== internals.hashMap || !(by >= 0 && Number.isFinite(by))) {
      this.counter.inc(this.labels, by);
      this.map = internals.hashMap;
      this.value = findValues(internals, this.labels);
      return;
    }
    value.value += by;
  }

  /** Whether observations take the fast road (the series was found): for the test that watches prom-client's internals. */
  get direct(): boolean {
    return this.value !== undefined;
  }
}

/** Series of one metric by a key the caller builds from the label values (cheaper than hashing the labels). */
export class SeriesByKey<S> {
  private readonly series = new Map<string, S>();

  constructor(private readonly make: (labels: LabelValues<string>) => S) {}

  get(key: string, labels: () => LabelValues<string>): S {
    let s = this.series.get(key);
    if (s === undefined) {
      s = this.make(labels());
      this.series.set(key, s);
    }
    return s;
  }
}
