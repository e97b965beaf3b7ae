// The work queues' metrics, named, labelled (`name`: the queue's) and
// bucketed as client-go's, so that dashboards written for upstream's
// controllers read ours. Counters and histograms are fed as keys move; the
// gauges are read from the live queues when /metrics is collected, so an idle
// server does no bookkeeping for them.

import { declareMetric } from '../machinery/metricdeclaration.js';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CounterSeries, HistogramSeries } from '../machinery/metricseries.js';
import type { QueueGauges, QueueObserver, WorkQueueMetrics } from '../client/workqueue.js';

/** 10 ns to 10 s, one bucket per decade, as client-go's queue histograms. */
const buckets = Array.from({ length: 10 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

export class PromWorkQueueMetrics implements WorkQueueMetrics {
  private readonly adds: Counter;
  private readonly retries: Counter;
  private readonly queueDuration: Histogram;
  private readonly workDuration: Histogram;
  /** The running queues' gauge readers; a name reused by a restarted controller takes over its series. */
  private readonly live = new Map<string, () => QueueGauges>();

  constructor(registry: Registry) {
    const labelNames = ['name'];
    // ALPHA (the default), as upstream's workqueue metrics.
    this.adds = new Counter(declareMetric(registry, { name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames }));
    this.retries = new Counter(declareMetric(registry, { name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames }));
    this.queueDuration = new Histogram(declareMetric(registry, {
      name: 'workqueue_queue_duration_seconds', help: 'How long in seconds an item stays in workqueue before being requested.', labelNames, buckets,
    }));
    this.workDuration = new Histogram(declareMetric(registry, {
      name: 'workqueue_work_duration_seconds', help: 'How long in seconds processing an item from workqueue takes.', labelNames, buckets,
    }));
    const live = this.live;
    const gauge = (name: string, help: string, read: (g: QueueGauges) => number) => new Gauge(declareMetric(registry, {
      name, help, labelNames,
      collect() {
        this.reset();
        for (const [queue, gauges] of live) this.set({ name: queue }, read(gauges()));
      },
    }));
    gauge('workqueue_depth', 'Current depth of workqueue', (g) => g.depth);
    gauge('workqueue_unfinished_work_seconds',
      'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      (g) => g.unfinishedSeconds);
    gauge('workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.', (g) => g.longestRunningSeconds);
  }

  queue(name: string, gauges: () => QueueGauges): QueueObserver {
    const labels = { name };
    this.live.set(name, gauges);
    // Series exist from the start, zero until something happens, as upstream's.
    // Kept per queue, so that a key moving costs no label hashing (machinery/metricseries.ts).
    const adds = new CounterSeries(this.adds, labels);
    const retries = new CounterSeries(this.retries, labels);
    const queued = new HistogramSeries(this.queueDuration, labels);
    const worked = new HistogramSeries(this.workDuration, labels);
    adds.inc(0);
    retries.inc(0);
    return {
      added: () => adds.inc(),
      started: (seconds) => queued.observe(seconds),
      finished: (seconds) => worked.observe(seconds),
      retried: () => retries.inc(),
      closed: () => { if (this.live.get(name) === gauges) this.live.delete(name); },
    };
  }
}
