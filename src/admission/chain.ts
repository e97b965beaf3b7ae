// The admission chain: every mutating plugin in order (a second round when a
// plugin asks for reinvocation, as upstream), then every validating plugin.
// The first rejection ends the request; plugins that reserved something for
// it get the chance to give it back.
//
// Every write passes every plugin, and most plugins decide at once (they do
// not act on the kind): the loop runs them without a promise or a turn of
// the microtask queue until one answers a promise, and then goes on from
// that plugin when it settles. Each plugin is timed by one clock read, where
// it ends (the previous plugin's end is its start), into a series it holds.

import { andThen, type MaybePromise } from '../machinery/maybe-async.js';
import type { AdmissionMetrics, PluginTimer, StepType } from './metrics.js';
import type { Admission, AdmissionPlugin, AdmissionRequest, MutationRound } from './types.js';

export interface ChainOptions {
  metrics?: AdmissionMetrics;
  /** Where a failing `release` is reported (it must not hide the rejection that caused it). */
  log?: (message: string, extra?: object) => void;
}

class Round implements MutationRound {
  reinvoke = false;
  asked = false;
  private states?: Map<string, unknown>;

  requestReinvocation(): void {
    if (!this.reinvoke) this.asked = true;
  }

  state<T>(plugin: string, create: () => T): T {
    const states = (this.states ??= new Map());
    if (!states.has(plugin)) states.set(plugin, create());
    return states.get(plugin) as T;
  }
}

/** A plugin with the series its durations go to. */
interface Step {
  plugin: AdmissionPlugin;
  timer?: PluginTimer;
}

/** What a phase that admitted answers: one promise, already settled, for every such phase. */
const admitted: Promise<void> = Promise.resolve();

/** Runs the enabled plugins: every mutating one in order, then every validating one. */
export class AdmissionChain implements Admission {
  /** Plugins with a `release` that admitted the request, in the order they ran. */
  private readonly reserved = new WeakMap<AdmissionRequest, AdmissionPlugin[]>();
  private readonly mutating: readonly Step[];
  private readonly validating: readonly Step[];

  constructor(readonly plugins: readonly AdmissionPlugin[], private readonly options: ChainOptions = {}) {
    const step = (plugin: AdmissionPlugin): Step => ({ plugin, timer: options.metrics?.pluginTimer(plugin.name) });
    this.mutating = plugins.filter((p) => p.mutate).map(step);
    this.validating = plugins.filter((p) => p.validate).map(step);
  }

  mutate(request: AdmissionRequest): Promise<void> {
    const round = new Round();
    return this.phase('admit', request, (started) => andThen(this.run('admit', this.mutating, 0, request, round, started), (ended) => {
      if (!round.asked) return ended;
      round.reinvoke = true;
      return this.run('admit', this.mutating, 0, request, round, ended);
    }));
  }

  validate(request: AdmissionRequest): Promise<void> {
    return this.phase('validate', request, (started) => this.run('validate', this.validating, 0, request, undefined, started));
  }

  async abandon(request: AdmissionRequest): Promise<void> {
    const plugins = this.reserved.get(request);
    if (!plugins) return;
    this.reserved.delete(request);
    for (const p of [...plugins].reverse()) {
      try {
        await p.release!(request);
      } catch (err) {
        this.options.log?.(`admission plugin ${p.name} could not release what it reserved`, { err });
      }
    }
  }

  /** One phase, timed from `started` to where its last plugin ended; a rejection releases what earlier plugins reserved. */
  private phase(type: StepType, request: AdmissionRequest, run: (started: number) => MaybePromise<number>): Promise<void> {
    const started = performance.now();
    let ended: MaybePromise<number>;
    try {
      ended = run(started);
    } catch (e) {
      return this.rejected(type, request, started, e);
    }
    if (typeof ended === 'number') {
      this.options.metrics?.observeStep(type, request.operation, false, (ended - started) / 1000);
      return admitted;
    }
    return ended.then(
      (end) => this.options.metrics?.observeStep(type, request.operation, false, (end - started) / 1000),
      (e: unknown) => this.rejected(type, request, started, e),
    );
  }

  private async rejected(type: StepType, request: AdmissionRequest, started: number, e: unknown): Promise<never> {
    try {
      await this.abandon(request);
    } finally {
      this.options.metrics?.observeStep(type, request.operation, true, (performance.now() - started) / 1000);
    }
    throw e;
  }

  /**
   * The steps from `from` on, the first starting at `since`: answers when
   * the last one ended, or a promise of it once a plugin answered a promise
   * (the rest run when it settles). A rejection is thrown or rejected.
   */
  private run(type: StepType, steps: readonly Step[], from: number, request: AdmissionRequest, round: Round | undefined, since: number): MaybePromise<number> {
    let last = since;
    for (let i = from; i < steps.length; i++) {
      const step = steps[i]!;
      let answered: Promise<void> | void;
      try {
        answered = type === 'admit' ? step.plugin.mutate!(request, round!) : step.plugin.validate!(request);
      } catch (e) {
        this.stepDone(step, type, request, last, true);
        throw e;
      }
      if (answered) {
        const start = last;
        return answered.then(
          () => this.run(type, steps, i + 1, request, round, this.stepDone(step, type, request, start, false)),
          (e: unknown) => {
            this.stepDone(step, type, request, start, true);
            throw e;
          },
        );
      }
      last = this.stepDone(step, type, request, last, false);
    }
    return last;
  }

  /** Its metric, and for a plugin that admitted and may have reserved something, a place in the list to release; answers the time it ended. */
  private stepDone(step: Step, type: StepType, request: AdmissionRequest, since: number, rejected: boolean): number {
    const now = performance.now();
    step.timer?.observe(type, request.operation, rejected, (now - since) / 1000);
    const plugin = step.plugin;
    if (rejected || !plugin.release) return now;
    const list = this.reserved.get(request);
    if (!list) this.reserved.set(request, [plugin]);
    else if (!list.includes(plugin)) list.push(plugin);
    return now;
  }
}

/** Admits everything: for stores used outside a server (tests, tools). */
export const admitAll: Admission = { mutate: async () => undefined, validate: async () => undefined };
