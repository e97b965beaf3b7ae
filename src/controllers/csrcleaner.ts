// The cleaner (upstream `csrcleaner`): removes certificate signing requests
// once they are done with: approved, denied or failed ones an hour after that
// condition was last updated, pending ones a day after creation, and any whose
// issued certificate has expired. Looks at every request when it changes and
// once an hour; the clock is injectable so that tests need not wait.

import { X509Certificate } from 'node:crypto';
import { ApiCallError, type ApiClient, type ApiObject } from '../client/types.js';
import type { KitArgument } from './controller.js';
import { conditionsOf, CsrController } from './csrcontroller.js';

const hourMs = 60 * 60 * 1000;
export const doneTtlMs = hourMs;
export const pendingTtlMs = 24 * hourMs;

export interface CsrCleanerOptions {
  /** Milliseconds since the epoch; the kit's clock unless a test moves time on. */
  now?: () => number;
  /** How often every request is looked at again. Default an hour, as upstream. */
  pollIntervalMs?: number;
}

/** Why `csr` is due for removal at `now`, or undefined. */
export function removalReason(csr: ApiObject, now: number): string | undefined {
  const olderThan = (time: unknown, ttl: number) => {
    const at = typeof time === 'string' ? Date.parse(time) : NaN;
    return !Number.isNaN(at) && now - at > ttl;
  };
  const conditions = conditionsOf(csr) as { type?: string; lastUpdateTime?: string }[];
  for (const type of ['Approved', 'Denied', 'Failed']) {
    if (conditions.some((c) => c.type === type && olderThan(c.lastUpdateTime, doneTtlMs))) return `${type.toLowerCase()} more than an hour ago`;
  }
  if (conditions.length === 0 && olderThan(csr.metadata?.creationTimestamp, pendingTtlMs)) return 'pending for more than a day';
  const expiry = certificateExpiry(csr);
  if (expiry !== undefined && now > expiry) return 'its certificate has expired';
  return undefined;
}

/** When the first issued certificate ends; undefined when none was issued or it cannot be read. */
function certificateExpiry(csr: ApiObject): number | undefined {
  if (typeof csr.status?.certificate !== 'string' || !csr.status.certificate) return undefined;
  try {
    return Date.parse(new X509Certificate(Buffer.from(csr.status.certificate, 'base64')).validTo);
  } catch {
    return undefined;
  }
}

export class CsrCleanerController extends CsrController {
  readonly name = 'csrcleaner';
  private readonly judgedAt: () => number;

  constructor(client: ApiClient, log: (msg: string, extra?: object) => void, kit: KitArgument, options: CsrCleanerOptions = {}) {
    // The informer's resync offers every request again each poll interval.
    super(client, log, kit, 'removing a certificate request failed', 'csrcleaner', options.pollIntervalMs ?? hourMs);
    this.judgedAt = options.now ?? this.now;
  }

  /** Every request is looked at; sync decides whether its time has come. */
  protected wants(): boolean {
    return true;
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.requests.get(undefined, name);
    if (!csr) return;
    const reason = removalReason(csr, this.judgedAt());
    if (reason === undefined) return;
    try {
      // Only the version judged: a request changed meanwhile is judged again.
      await this.client.delete(this.type, undefined, name, { preconditions: { uid: csr.metadata?.uid, resourceVersion: csr.metadata?.resourceVersion } });
    } catch (e) {
      if (e instanceof ApiCallError && (e.code === 409 || e.code === 404)) return;
      throw e;
    }
  }
}
