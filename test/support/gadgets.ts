// A namespaced test kind with every road a write can take: the main
// resource, a `status` part and a `scale` view (answering an
// autoscaling/v1 Scale). Tests add it to a running server's registry.

import { defineKind, statusSubresource, type KindDefinition, type KubeObject } from '../../src/api/kind.js';
import { t } from '../../src/api/schema.js';
import * as meta from '../../src/api/meta/v1.js';
import { productGroup } from '../../src/machinery/vocabulary.js';
import { renameKeys } from '../../src/machinery/ownkeys.js';

export const gadgetGroup = productGroup('gadgets');
const objectMeta = { ref: meta.ObjectMeta };
export const envelope = { apiVersion: t.string(), kind: t.string(), metadata: objectMeta };

const scales: KindDefinition = defineKind({
  group: 'autoscaling', version: 'v1', kind: 'Scale', plural: 'scales', scope: 'Namespaced',
  definitionName: 'test.autoscaling.v1.Scale',
  schema: t.object({ ...envelope, spec: t.object({ replicas: t.int32() }), status: t.object({ replicas: t.int32() }) }),
});

export const gadgets: KindDefinition = defineKind({
  group: gadgetGroup, version: 'v1', kind: 'Gadget', plural: 'gadgets', scope: 'Namespaced', shortNames: ['gd'],
  definitionName: 'test.gadgets.v1.Gadget',
  schema: t.object({ ...envelope, spec: t.object({ replicas: t.int32(), color: t.string() }), status: t.object({ ready: t.int32() }) }),
  subresources: {
    status: statusSubresource,
    scale: {
      kind: scales,
      verbs: ['get', 'update', 'patch'],
      view: (g: KubeObject) => ({
        apiVersion: 'autoscaling/v1', kind: 'Scale',
        metadata: { name: g.metadata?.name, namespace: g.metadata?.namespace, resourceVersion: g.metadata?.resourceVersion, uid: g.metadata?.uid },
        spec: { replicas: g.spec?.replicas ?? 0 }, status: { replicas: g.status?.ready ?? 0 },
      }),
      applyView: (g: KubeObject, scale: KubeObject) => ({ ...g, spec: { ...g.spec, replicas: scale.spec?.replicas ?? 0 } }),
    },
  },
});

/**
 * Gadgets served at two versions of one stored kind: v1 is stored
 * (spec.color, spec.replicas), v2 names the same fields spec.colour and
 * spec.count. The conversions only move fields, so both round trips are exact.
 * Each version selects on the colour field by its own name.
 */
export const versionedGadgets: KindDefinition = defineKind({
  ...gadgets,
  fieldSelectors: { 'spec.color': (g) => String(g.spec?.color ?? '') },
  otherVersions: [{
    name: 'v2',
    schema: t.object({ ...envelope, spec: t.object({ count: t.int32(), colour: t.string() }), status: t.object({ ready: t.int32() }) }),
    definitionName: 'test.gadgets.v2.Gadget',
    fieldSelectors: { 'spec.colour': (g) => String(g.spec?.colour ?? '') },
    toStored: (g) => (g.spec ? { ...g, spec: renameKeys(g.spec, { colour: 'color', count: 'replicas' }) } : g),
    fromStored: (g) => (g.spec ? { ...g, spec: renameKeys(g.spec, { color: 'colour', replicas: 'count' }) } : g),
  }],
});


/** The shape of gadgets at the versions below: v1's, relabelled. */
const sameShape = (name: string) => ({
  name, schema: gadgets.schema, definitionName: `test.gadgets.${name}.Gadget`, toStored: (g: KubeObject) => g, fromStored: (g: KubeObject) => g,
});

/**
 * Gadgets at each level: v1 (GA, stored), v1beta1 (beta, deprecated in 1.30
 * and removed in 1.35, upstream's way) and v1alpha1 (alpha: off unless
 * --runtime-config turns it on).
 */
export const leveledGadgets: KindDefinition = defineKind({
  ...gadgets,
  otherVersions: [
    { ...sameShape('v1beta1'), deprecated: true, deprecatedRelease: '1.30', removedRelease: '1.35', replacement: `${gadgetGroup}/v1 Gadget` },
    sameShape('v1alpha1'),
  ],
});
