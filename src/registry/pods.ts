// The REST objects of pods that are not parts of the stored object: binding
// (pods/{name}/binding and the namespace's bindings), and the sub-resources
// a node agent serves upstream (log, exec, attach, portforward, proxy).
//
// No node agent runs here, and this server never connects to an address
// taken from a Node, a Pod or a Service: the node-agent sub-resources check
// what upstream checks before it dials (the pod, its container, its node),
// then answer as upstream does when the agent cannot be reached.

import { isIPv4, isIPv6 } from 'node:net';
import { ApiError, errors, type Qualified } from '../machinery/errors.js';
import { rfc3339Now } from '../machinery/time.js';
import { goQuote } from '../machinery/goquote.js';
import { splitSchemeNamePort } from '../machinery/schemenameport.js';
import type { KubeObject, Verb } from '../api/kind.js';
import { bindings } from '../api/core/v1/binding.js';
import { pods } from '../api/core/v1/pod.js';
import { decodeObject } from '../api/decode.js';
import { podAttachOptions, podExecOptions, podPortForwardOptions, podProxyOptions, type ConnectOptionsKind } from '../api/core/v1/connectoptions.js';
import type { Registry } from './registry.js';
import type { RequestScope, ResourceStore, WriteOptions } from './store.js';
import { decodeOptions } from './writeoptions.js';
import { answeredAs, type RestDescription, type RestObject, type RestPath } from './rest.js';

type Obj = Record<string, any>;

const bindingResource: Qualified = { group: '', resource: 'pods/binding' };

/** Sets the pod's node, as upstream's binding does; refusals are conflicts on pods/binding. */
async function bind(store: ResourceStore, namespace: string | undefined, binding: KubeObject, opts: WriteOptions, scope: RequestScope): Promise<void> {
  const name: string = binding.metadata?.name ?? '';
  const node: string = binding.target.name;
  await store.updateWith(namespace, name, (pod) => {
    const refuse = (why: string) => errors.conflict(bindingResource, name, why);
    if (binding.metadata?.uid && binding.metadata.uid !== pod.metadata?.uid) throw refuse(`Precondition failed: UID in precondition: ${binding.metadata.uid}, UID in object meta: ${pod.metadata?.uid}`);
    if (pod.metadata?.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
    if (pod.spec?.nodeName) throw refuse(`pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
    if ((pod.spec?.schedulingGates ?? []).length) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
    pod.spec.nodeName = node;
    const annotations = binding.metadata?.annotations;
    if (annotations && Object.keys(annotations).length) pod.metadata!.annotations = { ...(pod.metadata!.annotations ?? {}), ...annotations };
    pod.status ??= {};
    const conditions: Obj[] = pod.status.conditions ?? [];
    const scheduled = conditions.find((c) => c.type === 'PodScheduled');
    if (!scheduled) conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339Now() });
    else if (scheduled.status !== 'True') Object.assign(scheduled, { status: 'True', lastTransitionTime: rfc3339Now() });
    pod.status.conditions = conditions;
    return pod;
  }, opts, scope, { subresource: 'binding' });
}



const success = (): KubeObject => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

/** pods/{name}/binding. */
function podBindingRest(store: ResourceStore): RestObject {
  const describe: RestDescription = { group: '', version: 'v1', resource: 'pods', subresource: 'binding', namespaced: true, kind: bindings, parentKind: pods, deleteAnswersObject: false, stored: false };
  return {
    describe,
    create: async (path, body, opts, scope) => {
      const sent = decodeObject(bindings, body.value, decodeOptions(body, opts, scope));
      if (sent.metadata?.name !== path.name) throw errors.badRequest('name in URL does not match name in Binding object');
      const binding = await store.admitAnswered(answeredAs(describe), path.name!, path.namespace, sent, opts, scope);
      await bind(store, path.namespace, binding, opts, { ...scope, admitted: true });
      return success();
    },
  };
}

/** The namespace's bindings: the binding names the pod. */
function bindingsRest(store: ResourceStore): RestObject {
  const describe: RestDescription = { group: '', version: 'v1', resource: 'bindings', namespaced: true, kind: bindings, parentKind: bindings, deleteAnswersObject: false, stored: false };
  return {
    describe,
    create: async (path, body, opts, scope) => {
      const sent = decodeObject(bindings, body.value, decodeOptions(body, opts, scope));
      if (sent.metadata?.namespace && sent.metadata.namespace !== path.namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const binding = await store.admitAnswered(answeredAs(describe), sent.metadata?.name ?? '', path.namespace, sent, opts, scope);
      await bind(store, path.namespace, binding, opts, { ...scope, admitted: true });
      return success();
    },
  };
}

/** Names of every container of a pod, as upstream lists them in its messages. */
function containerNames(pod: KubeObject): string[] {
  return ['containers', 'initContainers', 'ephemeralContainers'].flatMap((list) => (pod.spec?.[list] ?? []).map((c: Obj) => c.name as string));
}

/** The container a request names, or the only one; upstream's refusals otherwise. */
function containerOf(pod: KubeObject, asked: string | null): string {
  const name = pod.metadata?.name;
  if (!asked) {
    const main: Obj[] = pod.spec?.containers ?? [];
    if (main.length === 1) return main[0]!.name;
    throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`);
  }
  if (!containerNames(pod).includes(asked)) throw errors.badRequest(`container ${asked} is not valid for pod ${name}`);
  return asked;
}

/** Upstream's default order of node address types (--kubelet-preferred-address-types). */
const preferredAddressTypes = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

/** Addresses upstream's IsProxyableHostname refuses: loopback, link-local unicast and multicast, interface-local multicast. */
function unproxyableAddress(address: string): boolean {
  const lower = address.toLowerCase();
  if (isIPv4(address)) return address.startsWith('127.') || address.startsWith('169.254.') || address.startsWith('224.0.0.');
  return isIPv6(address) && (lower === '::1' || /^fe[89ab]/.test(lower) || /^ff[0-9a-f][12]:/.test(lower));
}

/**
 * Where upstream would dial the node agent of `nodeName`: looked up (a
 * missing node is upstream's NotFound), never connected to. The answer is
 * upstream's for an agent that cannot be reached: a 500 naming the address.
 * `port`: another port of the node than its agent's (nodes/{name}:{port}/proxy),
 * which upstream dials only at an address it may proxy to.
 */
export async function unreachableAgent(registry: Registry, nodeName: string, what: string, port = ''): Promise<never> {
  const nodes = registry.store('', 'v1', 'nodes');
  const node = nodes ? await nodes.find(undefined, nodeName) : undefined;
  if (!node) throw errors.notFound({ group: '', resource: 'nodes' }, nodeName);
  const addresses: Obj[] = node.status?.addresses ?? [];
  const address = preferredAddressTypes.map((type) => addresses.find((a) => a.type === type)?.address).find(Boolean);
  const agentPort = String(node.status?.daemonEndpoints?.kubeletEndpoint?.Port || 10250);
  const otherPort = port !== '' && port !== agentPort;
  if (otherPort && address && unproxyableAddress(address)) throw errors.badRequest('address not allowed');
  const host = address?.includes(':') ? `[${address}]` : address;
  const target = address ? `${host}:${otherPort ? port : agentPort}` : `node ${nodeName}`;
  throw new ApiError(500, '', `error dialing backend: ${what}: ${otherPort ? 'the node' : 'the node agent'} at ${target} cannot be reached from this server (it does not dial node addresses)`);
}

function connectRest(store: ResourceStore, subresource: string, verbs: Verb[], admitted: ConnectOptionsKind | undefined, answer: (pod: KubeObject, path: RestPath) => Promise<KubeObject | { text: string }>): RestObject {
  return {
    describe: { group: '', version: 'v1', resource: 'pods', subresource, namespaced: true, kind: pods, parentKind: pods, deleteAnswersObject: false, stored: false },
    connector: {
      verbs, ...(admitted ? { admitted } : {}),
      // The streams (exec, attach, portforward) need create whatever the method; log is a read.
      ...(verbs.includes('create') ? { requiresCreate: true } : {}),
      connect: async (path) => answer(await store.get(path.namespace, path.name!), path),
    },
  };
}

/** Every REST object of pods beside the stored kind's own. */
export function podRests(registry: Registry): RestObject[] {
  const store = registry.store('', 'v1', 'pods');
  if (!store) return [];
  const query = (path: RestPath, key: string) => path.query?.get(key) ?? null;
  const streaming = (name: string) => async (pod: KubeObject, path: RestPath): Promise<never> => {
    const container = containerOf(pod, query(path, 'container'));
    if (name === 'exec' && !(path.query?.getAll('command') ?? []).length) throw errors.badRequest('you must specify at least one command for the container');
    if (name !== 'portforward' && !['stdin', 'stdout', 'stderr'].some((k) => path.query?.get(k) === 'true' || path.query?.get(k) === '1')) {
      throw errors.badRequest('you must specify at least 1 of stdin, stdout, stderr');
    }
    if (!pod.spec?.nodeName) throw errors.badRequest(`pod ${pod.metadata?.name} does not have a host assigned`);
    return unreachableAgent(registry, pod.spec.nodeName, `${name} in container ${container} of pod ${pod.metadata?.name}`);
  };
  return [
    podBindingRest(store),
    bindingsRest(store),
    connectRest(store, 'log', ['get'], undefined, async (pod, path) => {
      const container = containerOf(pod, query(path, 'container'));
      // As upstream: a pod no node runs yet has no log, and answers an empty one.
      if (!pod.spec?.nodeName) return { text: '' };
      return unreachableAgent(registry, pod.spec.nodeName, `logs of container ${container} of pod ${pod.metadata?.name}`);
    }),
    connectRest(store, 'exec', ['create', 'get'], podExecOptions, streaming('exec')),
    connectRest(store, 'attach', ['create', 'get'], podAttachOptions, streaming('attach')),
    connectRest(store, 'portforward', ['create', 'get'], podPortForwardOptions, async (pod) => {
      if (!pod.spec?.nodeName) throw errors.badRequest(`pod ${pod.metadata?.name} does not have a host assigned`);
      return unreachableAgent(registry, pod.spec.nodeName, `port forwarding to pod ${pod.metadata?.name}`);
    }),
    podProxyRest(store),
  ];
}

/**
 * pods/{id}/proxy: `id` is `[scheme:]name[:port]` (request info and
 * authorization keep it whole, as upstream); without a port, the first
 * port a container declares.
 */
function podProxyRest(store: ResourceStore): RestObject {
  return {
    describe: { group: '', version: 'v1', resource: 'pods', subresource: 'proxy', namespaced: true, kind: pods, parentKind: pods, deleteAnswersObject: false, stored: false },
    connector: {
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
      admitted: podProxyOptions,
      connect: async (path) => {
        const target = splitSchemeNamePort(path.name!);
        if (!target) throw errors.badRequest(`invalid pod request ${goQuote(path.name!)}`);
        const pod = await store.get(path.namespace, target.name);
        const port = target.port || String(((pod.spec?.containers ?? []) as Obj[]).find((c) => (c.ports ?? []).length > 0)?.ports[0].containerPort ?? '');
        const ip: string = pod.status?.podIP ?? '';
        if (!ip || ip.startsWith('127.') || ip === '::1' || ip.startsWith('169.254.') || ip === '0.0.0.0') throw errors.badRequest('address not allowed');
        const host = ip.includes(':') ? `[${ip}]` : ip;
        throw errors.serviceUnavailable(`error trying to reach service: the pod's address ${port ? `${host}:${port}` : ip} cannot be reached from this server (it does not dial pod addresses)`);
      },
    },
  };
}

