// A small TypeInfo builder and a Pod-like kind for the patch and managed-fields tests.

import type { TypeInfo } from '../../../src/machinery/patch/typeinfo.js';

type Markers = Partial<Pick<TypeInfo, 'listType' | 'listMapKeys' | 'mapType' | 'patchMergeKey' | 'patchStrategy' | 'default'>>;

export const scalar: TypeInfo = { kind: 'scalar', field: () => undefined, elements: () => undefined };

export function scalarWith(markers: Markers): TypeInfo {
  return { ...scalar, ...markers };
}

export function struct(fields: Record<string, TypeInfo>, markers: Markers = {}, extra?: TypeInfo): TypeInfo {
  return { kind: 'struct', field: (n) => (Object.prototype.hasOwnProperty.call(fields, n) ? fields[n] : undefined), elements: () => extra, ...markers };
}

export function map(values: TypeInfo, markers: Markers = {}): TypeInfo {
  return { kind: 'map', field: () => undefined, elements: () => values, ...markers };
}

export function list(items: TypeInfo, markers: Markers = {}): TypeInfo {
  return { kind: 'list', field: () => undefined, elements: () => items, ...markers };
}

export const untypedT: TypeInfo = { kind: 'untyped', field: () => undefined, elements: () => untypedT };

const port = struct({ containerPort: scalar, protocol: scalarWith({ default: 'TCP' }), name: scalar });
const envVar = struct({ name: scalar, value: scalar });
export const container = struct({
  name: scalar,
  image: scalar,
  args: list(scalar),
  env: list(envVar, { patchStrategy: 'merge', patchMergeKey: 'name' }),
  ports: list(port, { listType: 'map', listMapKeys: ['containerPort', 'protocol'], patchStrategy: 'merge', patchMergeKey: 'containerPort' }),
});
const volume = struct({ name: scalar, emptyDir: struct({ medium: scalar }), hostPath: struct({ path: scalar }) });

export const meta = struct({
  name: scalar, namespace: scalar, uid: scalar, resourceVersion: scalar, generation: scalar, creationTimestamp: scalar,
  labels: map(scalar), annotations: map(scalar),
  finalizers: list(scalar, { patchStrategy: 'merge' }),
  managedFields: list(untypedT),
});

export const podType = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: meta,
  spec: struct({
    replicas: scalar,
    paused: scalar,
    containers: list(container, { patchStrategy: 'merge', patchMergeKey: 'name' }),
    volumes: list(volume, { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' }),
    tags: list(scalar, { listType: 'set' }),
    hosts: list(scalar),
    selector: struct({ matchLabels: map(scalar) }, { mapType: 'atomic' }),
    strategy: struct({ type: scalar, rollingUpdate: struct({ maxSurge: scalar, maxUnavailable: scalar }) }, { patchStrategy: 'retainKeys' }),
    nodeSelector: map(scalar),
    config: untypedT,
    matrix: list(list(scalar), { patchStrategy: 'merge' }),
  }),
  status: struct({ phase: scalar }),
});
