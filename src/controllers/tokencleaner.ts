// The token cleaner: deletes bootstrap token secrets once they expire. Each
// secret with an expiration is looked at again when it falls due (a delayed
// requeue), not by polling; an expiration that cannot be read counts as
// passed, as upstream.

import { vocabulary } from '../machinery/vocabulary.js';
import { timeToExpiry } from '../machinery/bootstraptoken.js';
import { ApiCallError, type ApiClient, type ResourceType } from '../client/types.js';
import { Informer } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import type { Controller } from './controller.js';

export class TokenCleaner implements Controller {
  readonly name = 'tokencleaner';
  private readonly queue: WorkQueue;
  private readonly secretsType: ResourceType;
  /** Bootstrap token secrets of the system namespace only. */
  private readonly tokens: Informer;

  constructor(
    private readonly client: ApiClient,
    private readonly log: (msg: string, extra?: object) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.secretsType = client.resources().find((r) => r.group === '' && r.resource === 'secrets')!;
    this.queue = new WorkQueue((name) => this.sync(name), (name, err) => this.log('bootstrap token cleanup failed', { name, err: String(err) }));
    const onSecret = (s: { metadata?: Record<string, any> }) => this.queue.add(String(s.metadata?.name));
    this.tokens = new Informer(client, this.secretsType, { onAdd: onSecret, onUpdate: (_o, s) => onSecret(s) },
      vocabulary.systemNamespace, { fieldSelector: `type=${vocabulary.bootstrapTokenSecretType}` });
  }

  start(): Promise<void> {
    return this.tokens.start();
  }

  stop(): void {
    this.tokens.stop();
    this.queue.stop();
  }

  private async sync(name: string): Promise<void> {
    const secret = this.tokens.get(vocabulary.systemNamespace, name);
    if (!secret || secret.metadata?.deletionTimestamp) return;
    const left = timeToExpiry(secret, this.now());
    if (left === undefined) return;
    if (left > 0) {
      this.queue.addAfter(name, left);
      return;
    }
    try {
      // Only the secret that expired: a new one of the same name is not this one.
      await this.client.delete(this.secretsType, vocabulary.systemNamespace, name, { preconditions: { uid: secret.metadata?.uid } });
    } catch (e) {
      if (e instanceof ApiCallError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
