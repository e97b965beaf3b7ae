// Admission metrics, named and labelled as upstream's so that dashboards and
// alerts written for it read ours: the duration of each phase (step), of
// each plugin (controller) and of each webhook call, webhook rejections by
// cause, webhook calls by answer and webhooks that failed open.

import { declareMetric } from '../machinery/metricdeclaration.js';
import { Counter, Histogram, type Registry } from 'prom-client';
import { HistogramSeries, SeriesByKey } from '../machinery/metricseries.js';
import type { Operation } from './types.js';

/** `admit` for the mutating phase, `validate` for the validating one. */
export type StepType = 'admit' | 'validate';
/** Upstream labels webhook calls `admit` (mutating) and `validating`. */
export type WebhookType = 'admit' | 'validating';
/** Why a webhook rejected: it said so (`no_error`), it could not be called, or we failed around it. */
export type RejectionErrorType = 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error';

/** The operations in the order of their slots. */
const operationSlots: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

const phaseBuckets = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];
const webhookBuckets = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25];

/** Codes above 600 are cut to 600 to keep the number of series bounded, as upstream. */
function boundedCode(code: number): string {
  return String(Math.min(code, 600));
}

/** Where the series of a phase, operation and outcome sits in a slot array: found by arithmetic, without building a key. */
function seriesSlot(type: StepType, operation: Operation, rejected: boolean): number {
  return (type === 'admit' ? 0 : operationSlots.length * 2) + operationSlots.indexOf(operation) * 2 + (rejected ? 1 : 0);
}

/** The series of one plugin, by slot (phase, operation, whether it rejected). */
export class PluginTimer {
  private readonly slots: HistogramSeries[] = [];

  constructor(private readonly name: string, private readonly series: SeriesByKey<HistogramSeries>) {}

  observe(type: StepType, operation: Operation, rejected: boolean, seconds: number): void {
    const slot = seriesSlot(type, operation, rejected);
    let series = this.slots[slot];
    if (!series) {
      const name = this.name;
      series = this.slots[slot] = this.series.get(`${name} ${type} ${operation} ${rejected}`, () => ({ name, type, operation, rejected: String(rejected) }));
    }
    series.observe(seconds);
  }
}

export class AdmissionMetrics {
  private readonly step: Histogram;
  private readonly controller: Histogram;
  private readonly webhook: Histogram;
  private readonly rejections: Counter;
  private readonly requests: Counter;
  private readonly failOpen: Counter;
  /** Every write observes each phase and each plugin: their series are kept (machinery/metricseries.ts says why). */
  private readonly steps: SeriesByKey<HistogramSeries>;
  private readonly controllers: SeriesByKey<HistogramSeries>;
  /** The phases' series by slot (seriesSlot). */
  private readonly stepSlots: HistogramSeries[] = [];
  private readonly controllerTimers = new Map<string, PluginTimer>();

  constructor(registry: Registry) {
    this.step = new Histogram(declareMetric(registry, {
      name: 'apiserver_admission_step_admission_duration_seconds',
      help: 'Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).',
      labelNames: ['type', 'operation', 'rejected'], buckets: phaseBuckets,
      stability: 'STABLE',
    }));
    this.controller = new Histogram(declareMetric(registry, {
      name: 'apiserver_admission_controller_admission_duration_seconds',
      help: 'Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'], buckets: phaseBuckets,
      stability: 'STABLE',
    }));
    this.webhook = new Histogram(declareMetric(registry, {
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'], buckets: webhookBuckets,
      stability: 'STABLE',
    }));
    this.rejections = new Counter(declareMetric(registry, {
      name: 'apiserver_admission_webhook_rejection_count',
      help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code. Codes greater than 600 are truncated to 600.',
      labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
      stability: 'ALPHA',
    }));
    this.requests = new Counter(declareMetric(registry, {
      name: 'apiserver_admission_webhook_request_total',
      help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600.',
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
      stability: 'ALPHA',
    }));
    this.failOpen = new Counter(declareMetric(registry, {
      name: 'apiserver_admission_webhook_fail_open_count',
      help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).',
      labelNames: ['name', 'type'],
      stability: 'ALPHA',
    }));
    this.steps = new SeriesByKey((labels) => new HistogramSeries(this.step, labels));
    this.controllers = new SeriesByKey((labels) => new HistogramSeries(this.controller, labels));
  }

  observeStep(type: StepType, operation: Operation, rejected: boolean, seconds: number): void {
    const slot = seriesSlot(type, operation, rejected);
    let series = this.stepSlots[slot];
    if (!series) series = this.stepSlots[slot] = this.steps.get(`${type} ${operation} ${rejected}`, () => ({ type, operation, rejected: String(rejected) }));
    series.observe(seconds);
  }

  observeController(name: string, type: StepType, operation: Operation, rejected: boolean, seconds: number): void {
    this.pluginTimer(name).observe(type, operation, rejected, seconds);
  }

  /** One plugin's series, for a caller that observes it on every write: held, so that no observation looks the name up. */
  pluginTimer(name: string): PluginTimer {
    let timer = this.controllerTimers.get(name);
    if (!timer) this.controllerTimers.set(name, timer = new PluginTimer(name, this.controllers));
    return timer;
  }

  /** One webhook call: its duration and its answer (`code` 0 when there was none). */
  observeWebhook(name: string, type: WebhookType, operation: Operation, rejected: boolean, code: number, seconds: number): void {
    this.webhook.observe({ name, type, operation, rejected: String(rejected) }, seconds);
    this.requests.inc({ name, type, operation, code: boundedCode(code), rejected: String(rejected) });
  }

  observeRejection(name: string, type: WebhookType, operation: Operation, errorType: RejectionErrorType, code: number): void {
    this.rejections.inc({ name, type, operation, error_type: errorType, rejection_code: boundedCode(code) });
  }

  observeFailOpen(name: string, type: WebhookType): void {
    this.failOpen.inc({ name, type });
  }
}
