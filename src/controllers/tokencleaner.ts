// The token cleaner: deletes bootstrap token secrets once they expire. Each
// secret with an expiration is looked at again when it falls due (a delayed
// requeue), not by polling; an expiration that cannot be read counts as
// passed, as upstream.

import { vocabulary } from '../machinery/vocabulary.js';
import { timeToExpiry } from '../machinery/bootstraptoken.js';
import { ApiCallError, type ApiClient } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

export class TokenCleaner extends BaseController {
  readonly name = 'tokencleaner';
  private readonly queue: WorkQueue;
  /** Bootstrap token secrets of the system namespace only. */
  private readonly tokens: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((name) => this.sync(name), { name: 'token_cleaner', failure: 'bootstrap token cleanup failed' });
    const onSecret = (s: { metadata?: Record<string, any> }) => this.queue.add(String(s.metadata?.name));
    this.tokens = this.watch(this.resolve(resources.secrets), { onAdd: onSecret, onUpdate: (_o, s) => onSecret(s) },
      { namespace: vocabulary.systemNamespace, fieldSelector: `type=${vocabulary.bootstrapTokenSecretType}` });
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
      await this.client.delete(this.tokens.type, vocabulary.systemNamespace, name, { preconditions: { uid: secret.metadata?.uid } });
    } catch (e) {
      if (e instanceof ApiCallError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
