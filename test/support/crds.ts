// Test CustomResourceDefinitions written as projects ship them: upstream's
// `apiextensions.k8s.io/v1` with `x-kubernetes-*` markers. Widgets have a
// status and a scale sub-resource, printer columns, a selectable field, a
// list-map, defaults, enums, patterns and CEL rules (a transition rule too).

export const widgetGroup = 'stable.example.com';

export function widgetSpecSchema(): Record<string, unknown> {
  return {
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' }],
    properties: {
      color: { type: 'string', enum: ['red', 'green', 'blue'], default: 'red', description: 'The colour of the widget.' },
      replicas: { type: 'integer', minimum: 0, default: 1, description: 'How many widgets.' },
      maxReplicas: { type: 'integer', default: 10 },
      name: { type: 'string', pattern: '^[a-z]+$' },
      size: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'size is immutable' }] },
      ports: {
        type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
      },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  };
}

/** A definition of widgets in upstream's form; `overrides` changes the spec's top-level fields. */
export function widgetCrd(overrides: Record<string, unknown> = {}, plural = 'widgets', kind = 'Widget'): Record<string, any> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${widgetGroup}` },
    spec: {
      group: widgetGroup,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: [`${plural.slice(0, 2)}x`], categories: ['all', 'gizmos'] },
      versions: [{
        name: 'v1', served: true, storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        additionalPrinterColumns: [
          { name: 'Color', type: 'string', jsonPath: '.spec.color' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        selectableFields: [{ jsonPath: '.spec.color' }],
        schema: {
          openAPIV3Schema: {
            type: 'object', description: `A ${kind} of the tests.`,
            properties: { spec: widgetSpecSchema(), status: { type: 'object', properties: { replicas: { type: 'integer' } } } },
          },
        },
      }],
      ...overrides,
    },
  };
}

export const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
