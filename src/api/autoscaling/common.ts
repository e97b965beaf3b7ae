// What both served versions of HorizontalPodAutoscaler share.

import { define, p, t } from '../schema.js';

type Obj = Record<string, any>;
const s = t.string;

export const crossVersionReference = (name: string) => define(name, t.object({
  kind: p(1, s('Kind of the referent.')),
  name: p(2, s('Name of the referent.')),
  apiVersion: p(3, s('API version of the referent.')),
}, 'Names an object of any version.', { required: ['kind', 'name'] }));

/** The CPU utilization metric upstream fills in for an autoscaler that names none. */
export const cpuUtilization = (percent: number): Obj => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: percent } } });

