// autoscaling/v1 Scale: the view a scale sub-resource answers with (custom
// resources' `/scale`). Never stored; it only describes the view's shape.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { define, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { kindSchema } from '../../core/v1/common.js';

export const scales = defineKind({
  group: 'autoscaling', version: 'v1', kind: 'Scale', plural: 'scales', scope: 'Namespaced', strategicMerge: false,
  schema: define(`${definitionPrefix}.api.autoscaling.v1.Scale`, kindSchema('The desired and observed replicas of a scalable object.', {
    spec: t.object({ replicas: t.int32('Desired number of instances.') }, 'The desired scale.'),
    status: t.object({ replicas: t.int32('Actual number of observed instances.'), selector: t.string('Label query over the instances, as a string.') }, 'The observed scale.'),
  })),
});
