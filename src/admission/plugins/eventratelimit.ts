// EventRateLimit: token buckets on event writes, so that a component in a
// loop cannot flood the store with events. Each configured limit keeps
// buckets by its key: one for the whole server, one per namespace, per user,
// or per event source and involved object (the last three in a bounded
// least-recently-used cache of buckets). A create or update of a core Event
// takes a token from the bucket of every limit; when one has none left the
// request is refused with 429 and Retry-After (the time until its next
// token). Validating phase, as upstream.
//
// Configuration (required, as upstream): kind Configuration of
// eventratelimit.admission.<product domain>/v1alpha1 (upstream's group accepted),
// `limits`: a list of { type, qps, burst, cacheSize }.

import { errors, fieldErrors, type FieldError } from '../../machinery/errors.js';
import { ownValue } from '../../machinery/ownkeys.js';
import { productGroup, upstreamCompat } from '../../machinery/vocabulary.js';
import { requestKind, type AdmissionPlugin, type AdmissionRequest } from '../types.js';
import { AdmissionConfigError } from '../plugin-names.js';
import { configSource, expectKind } from '../config.js';

export type LimitType = 'Server' | 'Namespace' | 'User' | 'SourceAndObject';
const limitTypes: readonly LimitType[] = ['Namespace', 'Server', 'SourceAndObject', 'User'];

export interface EventLimit {
  type: LimitType;
  qps: number;
  burst: number;
  cacheSize: number;
}

/** Buckets kept per limit when its cacheSize is 0 (upstream's default). */
const defaultCacheSize = 4096;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** The configuration's limits, checked as upstream's ValidateConfiguration; no configuration is an error. */
export function eventLimitsConfig(config: Record<string, unknown> | undefined): EventLimit[] {
  if (!config) {
    throw new AdmissionConfigError('admission plugin EventRateLimit needs a configuration (kind Configuration, apiVersion '
      + `${productGroup('eventratelimit.admission')}/v1alpha1, with limits) in --admission-control-config-file: limits: Invalid value: null: must not be empty`);
  }
  const what = configSource(config, 'EventRateLimit');
  expectKind(config, [productGroup('eventratelimit.admission'), `eventratelimit.admission.${upstreamCompat.groupDomain}`].map((g) => ({ apiVersion: `${g}/v1alpha1`, kind: 'Configuration' })), what);
  const list = ownValue(config, 'limits') ?? [];
  if (!Array.isArray(list)) throw new AdmissionConfigError(`${what}: limits must be a list`);
  const problems: FieldError[] = [];
  if (list.length === 0) problems.push(fieldErrors.invalid('limits', null, 'must not be empty'));
  const limits: EventLimit[] = [];
  list.forEach((entry: unknown, i) => {
    const at = `limits[${i}]`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(fieldErrors.typeInvalid(at, entry, 'must be an object'));
      return;
    }
    const limit = entry as Record<string, unknown>;
    const type = ownValue(limit, 'type');
    const qps = ownValue(limit, 'qps') ?? 0;
    const burst = ownValue(limit, 'burst') ?? 0;
    const cacheSize = ownValue(limit, 'cacheSize') ?? 0;
    for (const [field, value] of [['qps', qps], ['burst', burst], ['cacheSize', cacheSize]] as const) {
      if (!isInt(value)) problems.push(fieldErrors.typeInvalid(`${at}.${field}`, value, 'must be an integer'));
    }
    if (!limitTypes.includes(type as LimitType)) problems.push(fieldErrors.notSupported(`${at}.type`, type ?? '', limitTypes));
    if (isInt(burst) && burst <= 0) problems.push(fieldErrors.invalid(`${at}.burst`, burst, 'must be positive'));
    if (isInt(qps) && qps <= 0) problems.push(fieldErrors.invalid(`${at}.qps`, qps, 'must be positive'));
    if (type !== 'Server' && isInt(cacheSize) && cacheSize < 0) problems.push(fieldErrors.invalid(`${at}.cacheSize`, cacheSize, 'must not be negative'));
    limits.push({ type: type as LimitType, qps: qps as number, burst: burst as number, cacheSize: cacheSize as number });
  });
  if (problems.length) throw new AdmissionConfigError(`${what}: ${problems.map((p) => p.describe()).join(', ')}`);
  return limits;
}

/** A token bucket that starts full (client-go's token-bucket rate limiter), on an injectable clock in milliseconds. */
class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(private readonly qps: number, private readonly burst: number, private readonly now: () => number) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token if one is there; otherwise answers the seconds until the next one. */
  take(): number | undefined {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return undefined;
    }
    return (1 - this.tokens) / this.qps;
  }
}

/** The buckets of one limit by key, the least recently used dropped past `size`. */
class BucketCache {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly size: number, private readonly make: () => TokenBucket) {}

  get(key: string): TokenBucket {
    let bucket = this.buckets.get(key);
    if (bucket) this.buckets.delete(key);
    else bucket = this.make();
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.size) this.buckets.delete(this.buckets.keys().next().value as string);
    return bucket;
  }
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/** The bucket key of a request under a limit type, as upstream computes it. */
function keyOf(type: LimitType, r: AdmissionRequest): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return r.namespace ?? '';
    case 'User':
      return r.user?.username ?? '';
    case 'SourceAndObject': {
      const event = r.object ?? {};
      const source = event.source ?? {};
      const object = event.involvedObject ?? {};
      return [source.component, source.host, object.kind, object.namespace, object.name, object.uid, object.apiVersion].map(text).join('');
    }
  }
}

export class EventRateLimit implements AdmissionPlugin {
  readonly name = 'EventRateLimit';
  private readonly enforcers: { type: LimitType; cache: BucketCache }[];

  constructor(limits: readonly EventLimit[], now: () => number = () => performance.now()) {
    this.enforcers = limits.map((limit) => ({
      type: limit.type,
      cache: new BucketCache(limit.type === 'Server' ? 1 : limit.cacheSize || defaultCacheSize, () => new TokenBucket(limit.qps, limit.burst, now)),
    }));
  }

  validate(r: AdmissionRequest): void {
    if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return;
    const kind = requestKind(r);
    if (kind.group !== '' || kind.kind !== 'Event') return;
    let refusal: Error | undefined;
    // Every limit takes its token, as upstream; the last refusal is the answer.
    for (const { type, cache } of this.enforcers) {
      const key = keyOf(type, r);
      const wait = cache.get(key).take();
      if (wait !== undefined) refusal = errors.tooManyRequests(`Too many requests: limit reached on type ${type} for key ${key}`, Math.max(1, Math.ceil(wait)));
    }
    if (refusal) throw refusal;
  }
}
