// An in-process controller: started after the server is listening, stopped
// before the store closes. Each is its watches (subscriptions to the
// process's shared informers) plus a sync of one key at a time on a work
// queue with a bounded number of workers, reading from the informers' caches
// and acting through an ApiClient.

import { realClock, type Clock } from '../client/clock.js';
import type { ApiClient, ResourceType } from '../client/types.js';
import { InformerFactory, type InformerHandlers, type InformerSubscription, type SubscribeOptions } from '../client/informer.js';
import { WorkQueue, type Sync, type WorkQueueMetrics, type WorkQueueOptions } from '../client/workqueue.js';
import { resourceType, type ResourceHandle } from '../client/resources.js';

export type Log = (msg: string, extra?: object) => void;

export interface Controller {
  readonly name: string;
  /** Resolves once its informers have synced. */
  start(): Promise<void>;
  /** Stops watching and taking keys; resolves once the running syncs are done. */
  stop(): void | Promise<void>;
  /** Its work queues (for diagnostics and tests: names, bounds, high-water marks). */
  queues?(): readonly WorkQueue[];
}

/** What the controllers of a process share: its informers, the queues' metrics and the clock. */
export interface ControllerKit {
  informers: InformerFactory;
  metrics?: WorkQueueMetrics;
  clock?: Clock;
}

/** Tests hand controllers a bare informer factory; the manager hands them the whole kit. */
export type KitArgument = InformerFactory | ControllerKit;

export function kitOf(arg: KitArgument): ControllerKit {
  return arg instanceof InformerFactory ? { informers: arg } : arg;
}

/** The bookkeeping every controller repeats: its subscriptions and queues, started and stopped together. */
export abstract class BaseController implements Controller {
  abstract readonly name: string;
  protected readonly kit: ControllerKit;
  private readonly subscriptions: InformerSubscription[] = [];
  private readonly ownQueues: WorkQueue[] = [];

  constructor(protected readonly client: ApiClient, protected readonly log: Log, kit: KitArgument) {
    this.kit = kitOf(kit);
  }

  /** The kit's clock, read by controllers that judge times (expiries, ages). */
  protected readonly now = (): number => (this.kit.clock ?? realClock).now();

  /** The served type of a resource handle. */
  protected resolve(handle: ResourceHandle): ResourceType {
    return resourceType(this.client, handle);
  }

  /** A shared informer's view with this controller's handlers; started by start(). */
  protected watch(type: ResourceType, handlers: InformerHandlers, options?: SubscribeOptions): InformerSubscription {
    const s = this.kit.informers.subscribe(type, handlers, options);
    this.subscriptions.push(s);
    return s;
  }

  /** A work queue of this controller, on the kit's clock and metrics. */
  protected workQueue(sync: Sync, options: Omit<WorkQueueOptions, 'clock' | 'metrics' | 'log'>): WorkQueue {
    const q = new WorkQueue(sync, { ...options, clock: this.kit.clock, metrics: this.kit.metrics, log: this.log });
    this.ownQueues.push(q);
    return q;
  }

  queues(): readonly WorkQueue[] {
    return this.ownQueues;
  }

  async start(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.start()));
  }

  async stop(): Promise<void> {
    for (const s of this.subscriptions) s.stop();
    await Promise.all(this.ownQueues.map((q) => q.shutDown()));
  }
}
