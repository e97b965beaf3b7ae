// The admission chain: every mutating plugin in order (a second round when a
// plugin asks for reinvocation, as upstream), then every validating plugin.
// The first rejection ends the request; plugins that reserved something for
// it get the chance to give it back.

import type { AdmissionMetrics, StepType } from './metrics.js';
import type { Admission, AdmissionPlugin, AdmissionRequest, MutationRound } from './types.js';

export interface ChainOptions {
  metrics?: AdmissionMetrics;
  /** Where a failing `release` is reported (it must not hide the rejection that caused it). */
  log?: (message: string, extra?: object) => void;
}

class Round implements MutationRound {
  reinvoke = false;
  asked = false;
  private readonly states = new Map<string, unknown>();

  requestReinvocation(): void {
    if (!this.reinvoke) this.asked = true;
  }

  state<T>(plugin: string, create: () => T): T {
    if (!this.states.has(plugin)) this.states.set(plugin, create());
    return this.states.get(plugin) as T;
  }
}

/** Runs the enabled plugins: every mutating one in order, then every validating one. */
export class AdmissionChain implements Admission {
  /** Plugins with a `release` that admitted the request, in the order they ran. */
  private readonly reserved = new WeakMap<AdmissionRequest, AdmissionPlugin[]>();

  constructor(readonly plugins: readonly AdmissionPlugin[], private readonly options: ChainOptions = {}) {}

  async mutate(request: AdmissionRequest): Promise<void> {
    await this.phase('admit', request, async () => {
      const round = new Round();
      await this.mutateOnce(request, round);
      if (!round.asked) return;
      round.reinvoke = true;
      await this.mutateOnce(request, round);
    });
  }

  async validate(request: AdmissionRequest): Promise<void> {
    await this.phase('validate', request, async () => {
      for (const p of this.plugins) {
        if (!p.validate) continue;
        const pending = this.step(p, 'validate', request);
        if (pending) await pending;
      }
    });
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

  private async mutateOnce(request: AdmissionRequest, round: Round): Promise<void> {
    for (const p of this.plugins) {
      if (!p.mutate) continue;
      const pending = this.step(p, 'admit', request, round);
      if (pending) await pending;
    }
  }

  /** One phase, timed; a rejection releases what earlier plugins reserved. */
  private async phase(type: StepType, request: AdmissionRequest, run: () => Promise<void>): Promise<void> {
    const started = performance.now();
    let rejected = true;
    try {
      await run();
      rejected = false;
    } catch (e) {
      await this.abandon(request);
      throw e;
    } finally {
      this.options.metrics?.observeStep(type, request.operation, rejected, (performance.now() - started) / 1000);
    }
  }

  /**
   * One plugin's mutation (with its round) or validation, timed. Most plugins
   * decide at once for most requests (they do not act on the kind): those
   * are measured and done without a promise or a turn of the microtask
   * queue; one that answers a promise is awaited by the caller through the
   * promise returned here.
   */
  private step(plugin: AdmissionPlugin, type: StepType, request: AdmissionRequest, round?: Round): Promise<void> | undefined {
    const started = performance.now();
    let answered: Promise<void> | void;
    try {
      answered = type === 'admit' ? plugin.mutate!(request, round!) : plugin.validate!(request);
    } catch (e) {
      this.stepDone(plugin, type, request, started, true);
      throw e;
    }
    if (!answered) {
      this.stepDone(plugin, type, request, started, false);
      return undefined;
    }
    return answered.then(
      () => this.stepDone(plugin, type, request, started, false),
      (e: unknown) => {
        this.stepDone(plugin, type, request, started, true);
        throw e;
      },
    );
  }

  /** Its metric, and for a plugin that admitted and may have reserved something, a place in the list to release. */
  private stepDone(plugin: AdmissionPlugin, type: StepType, request: AdmissionRequest, started: number, rejected: boolean): void {
    this.options.metrics?.observeController(plugin.name, type, request.operation, rejected, (performance.now() - started) / 1000);
    if (rejected || !plugin.release) return;
    const list = this.reserved.get(request) ?? [];
    if (!list.includes(plugin)) list.push(plugin);
    this.reserved.set(request, list);
  }
}

/** Admits everything: for stores used outside a server (tests, tools). */
export const admitAll: Admission = { mutate: async () => undefined, validate: async () => undefined };
