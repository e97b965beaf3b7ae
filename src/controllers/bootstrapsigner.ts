// The bootstrap signer: keeps the public cluster-info ConfigMap signed, one
// detached HS256 JWS per signing bootstrap token under
// `jws-kubeconfig-<token id>`, adding, updating and removing signatures as
// tokens come, change, expire and go. The protected header names the token
// (`kid`); the HMAC key is the whole token, as the spec says.

import { CompactSign } from 'jose';
import { vocabulary } from '../machinery/vocabulary.js';
import { ownValue, setOwn } from '../machinery/ownkeys.js';
import { clusterInfo, detachPayload, signatureKey, signingToken, timeToExpiry } from '../machinery/bootstraptoken.js';
import { ApiCallError, type ApiClient, type ApiObject } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

/** The detached signature of `content` with a token. */
export async function signClusterInfo(content: string, id: string, secret: string): Promise<string> {
  const compact = await new CompactSign(new TextEncoder().encode(content)).setProtectedHeader({ alg: 'HS256', kid: id }).sign(signatureKey(id, secret));
  return detachPayload(compact);
}

/** The one thing this controller keeps in shape. */
const key = `${clusterInfo.namespace}/${clusterInfo.name}`;

export class BootstrapSigner extends BaseController {
  readonly name = 'bootstrapsigner';
  private readonly queue: WorkQueue;
  private readonly configMap: InformerSubscription;
  private readonly tokens: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue(() => this.sync(), { name: 'bootstrap_signer_queue', failure: 'signing cluster-info failed', describe: (_k, err) => ({ err: String(err) }) });
    const changed = () => this.queue.add(key);
    const handlers = { onAdd: changed, onUpdate: changed, onDelete: changed };
    this.configMap = this.watch(this.resolve(resources.configMaps), handlers, { namespace: clusterInfo.namespace, fieldSelector: `metadata.name=${clusterInfo.name}` });
    this.tokens = this.watch(this.resolve(resources.secrets), handlers, { namespace: vocabulary.systemNamespace, fieldSelector: `type=${vocabulary.bootstrapTokenSecretType}` });
  }

  private async sync(): Promise<void> {
    const cm = this.configMap.get(clusterInfo.namespace, clusterInfo.name);
    const data: Record<string, string> | undefined = cm?.data;
    const content = data === undefined ? undefined : ownValue(data, clusterInfo.kubeconfigKey);
    if (!cm || cm.metadata?.deletionTimestamp || typeof content !== 'string') return;
    const now = this.now();
    const wanted = new Map<string, string>();
    let nextExpiry = Infinity;
    for (const secret of this.tokens.list()) {
      const token = signingToken(secret, now);
      if (!token) continue;
      wanted.set(`${clusterInfo.signaturePrefix}${token.id}`, await signClusterInfo(content, token.id, token.secret));
      nextExpiry = Math.min(nextExpiry, timeToExpiry(secret, now) ?? Infinity);
    }
    // An expired token's signature goes when it expires, even if its secret stays.
    if (nextExpiry !== Infinity) this.queue.addAfter(key, nextExpiry);
    const next: Record<string, string> = {};
    for (const [k, v] of Object.entries(data!)) if (!k.startsWith(clusterInfo.signaturePrefix)) setOwn(next, k, v);
    for (const [k, v] of wanted) setOwn(next, k, v);
    if (sameData(data!, next)) return;
    try {
      await this.client.update(this.configMap.type, clusterInfo.namespace, { ...cm, data: next } as ApiObject);
    } catch (e) {
      // Changed or deleted meanwhile: the informer's event brings it back.
      if (e instanceof ApiCallError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => ownValue(b, k) === a[k]);
}
