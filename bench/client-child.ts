// One client library in a process of its own (forked by bench/client.ts), so
// that the CPU it reports is the client's alone: this package's RemoteClient
// or @kubernetes/client-node, told over IPC what to do and answering with the
// CPU milliseconds it spent doing it.

import * as k8s from '@kubernetes/client-node';
import { RemoteClient } from '../src/client/index.js';
import type { ResourceClient } from '../src/client/remote.js';

export type Which = 'plat' | 'client-node';

export type Command =
  | { op: 'init'; which: Which; server: string; ca: string; cert: string; key: string; namespace: string }
  | { op: 'gets'; count: number; population: number; concurrency: number; seed: number }
  | { op: 'watch'; count: number };

export type Answer = { op: 'ready' } | { op: 'done'; cpuMs: number; n: number } | { op: 'error'; message: string };

const send = (a: Answer) => process.send!(a);
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

let get: (name: string) => Promise<unknown>;
let watch: (onAdded: () => void) => Promise<() => void>;

function init(c: Extract<Command, { op: 'init' }>): void {
  if (c.which === 'plat') {
    const client = new RemoteClient({ server: c.server, caPem: c.ca, certPem: c.cert, keyPem: c.key, namespace: c.namespace }, { qps: 0 });
    let configMaps: ResourceClient | undefined;
    const resource = async () => (configMaps ??= (await client.resource({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] })).inNamespace(c.namespace));
    get = async (name) => (await resource()).get(name);
    watch = async (onAdded) => {
      const r = await resource();
      const { resourceVersion } = await r.list({ limit: 1 });
      const it = r.watch({ resourceVersion })[Symbol.asyncIterator]();
      void (async () => {
        for (;;) {
          const e = await it.next();
          if (e.done) return;
          if (e.value.type === 'ADDED') onAdded();
        }
      })();
      return () => void it.return?.(undefined);
    };
    return;
  }
  const kc = new k8s.KubeConfig();
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: c.server, caData: b64(c.ca), skipTLSVerify: false }],
    users: [{ name: 'u', certData: b64(c.cert), keyData: b64(c.key) }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  get = (name) => core.readNamespacedConfigMap({ name, namespace: c.namespace });
  watch = async (onAdded) => {
    const list = await core.listNamespacedConfigMap({ namespace: c.namespace, limit: 1 });
    const w = new k8s.Watch(kc);
    const abort = await w.watch(`/api/v1/namespaces/${c.namespace}/configmaps`, { resourceVersion: list.metadata?.resourceVersion }, (type) => { if (type === 'ADDED') onAdded(); }, () => {});
    return () => abort.abort();
  };
}

async function gets(c: Extract<Command, { op: 'gets' }>): Promise<number> {
  let seed = c.seed;
  const next = () => {
    // A small LCG: the same names for both clients in a round.
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return `cm-${String(seed % c.population).padStart(5, '0')}`;
  };
  const names = Array.from({ length: c.count }, next);
  let i = 0;
  const cpu0 = cpuNow();
  await Promise.all(Array.from({ length: c.concurrency }, async () => {
    while (i < names.length) await get(names[i++]!);
  }));
  return cpuNow() - cpu0;
}

let pendingWatch: { count: number; seen: number; cpu0: number; stop?: () => void } | undefined;

process.on('message', (c: Command) => {
  void (async () => {
    try {
      if (c.op === 'init') {
        init(c);
        await get('cm-00000');
        send({ op: 'ready' });
      } else if (c.op === 'gets') {
        send({ op: 'done', cpuMs: await gets(c), n: c.count });
      } else {
        const state: NonNullable<typeof pendingWatch> = { count: c.count, seen: 0, cpu0: 0 };
        pendingWatch = state;
        state.stop = await watch(() => {
          if (++state.seen === state.count) {
            const cpuMs = cpuNow() - state.cpu0;
            state.stop?.();
            send({ op: 'done', cpuMs, n: state.count });
          }
        });
        state.cpu0 = cpuNow();
        send({ op: 'ready' });
      }
    } catch (e) {
      send({ op: 'error', message: (e as Error).stack ?? String(e) });
    }
  })();
});

// The bench is gone: so is this process (exiting normally, so that --cpu-prof writes its profile).
process.on('disconnect', () => process.exit(0));
