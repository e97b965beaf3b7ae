// The options kinds of the CONNECT sub-resources (core v1): what admission
// sees of a pods/exec, pods/attach, pods/portforward or proxy request, as
// upstream, where the request's object is these options (from the query)
// and its kind is theirs while its resource is the parent's (pods, services,
// nodes). They are never stored nor served as resources of their own.

import { define, t, type Schema } from '../../schema.js';
import { defineKind, type KindDefinition, type KubeObject } from '../../kind.js';
import { core } from './common.js';

/** An options kind and how its object is read from a request's query. */
export interface ConnectOptionsKind {
  kind: KindDefinition;
  fromQuery(query: URLSearchParams | undefined): KubeObject;
}

/** As Go's strconv.ParseBool, which upstream's query decoding uses. */
const queryBool = (query: URLSearchParams | undefined, key: string) => ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(query?.get(key) ?? '');

function optionsKind(kind: string, plural: string, scope: 'Namespaced' | 'Cluster', properties: Record<string, Schema>,
  fields: (query: URLSearchParams | undefined) => Record<string, unknown>): ConnectOptionsKind {
  const definition = defineKind({
    group: '', version: 'v1', kind, plural, scope, verbs: [],
    schema: define(core(kind), t.object({ apiVersion: t.string(), kind: t.string(), ...properties })),
  });
  return { kind: definition, fromQuery: (query) => ({ kind, apiVersion: 'v1', ...fields(query) }) };
}

/** The stream flags, each sent only when set (upstream's omitempty). */
function streams(query: URLSearchParams | undefined, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (queryBool(query, key)) out[key] = true;
  const container = query?.get('container');
  if (container) out.container = container;
  return out;
}

const pathOnly = (query: URLSearchParams | undefined) => (query?.get('path') ? { path: query.get('path') } : {});

export const podExecOptions = optionsKind('PodExecOptions', 'pods', 'Namespaced',
  { stdin: t.bool(), stdout: t.bool(), stderr: t.bool(), tty: t.bool(), container: t.string(), command: t.array(t.string()) },
  (query) => ({ ...streams(query, ['stdin', 'stdout', 'stderr', 'tty']), command: query?.getAll('command') ?? [] }));

export const podAttachOptions = optionsKind('PodAttachOptions', 'pods', 'Namespaced',
  { stdin: t.bool(), stdout: t.bool(), stderr: t.bool(), tty: t.bool(), container: t.string() },
  (query) => streams(query, ['stdin', 'stdout', 'stderr', 'tty']));

export const podPortForwardOptions = optionsKind('PodPortForwardOptions', 'pods', 'Namespaced', { ports: t.array(t.int32()) }, (query) => {
  const ports = (query?.getAll('ports') ?? []).flatMap((p) => p.split(',')).map(Number).filter(Number.isInteger);
  return ports.length ? { ports } : {};
});

export const podProxyOptions = optionsKind('PodProxyOptions', 'pods', 'Namespaced', { path: t.string() }, pathOnly);
export const serviceProxyOptions = optionsKind('ServiceProxyOptions', 'services', 'Namespaced', { path: t.string() }, pathOnly);
export const nodeProxyOptions = optionsKind('NodeProxyOptions', 'nodes', 'Cluster', { path: t.string() }, pathOnly);
