// AlwaysPullImages: every container of a pod created, or updated with an
// image it did not have, is pulled each time it starts, so that an image a
// node holds is not run by someone without the credentials to pull it. The
// mutating phase sets the policy; the validating phase refuses a pod a later
// mutation turned back (403 naming each such container).

import { fieldErrors } from '../../machinery/errors.js';
import type { KubeObject } from '../../api/kind.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { containersOf, podWritten } from './pods.js';

/** An update that brings no image the pod did not have already is left alone. */
function bringsNewImage(r: AdmissionRequest, pod: KubeObject): boolean {
  if (r.operation !== 'UPDATE') return true;
  const old = new Set([...containersOf(r.oldObject?.spec)].map(([c]) => c.image));
  return [...containersOf(pod.spec)].some(([c]) => !old.has(c.image));
}

export class AlwaysPullImages implements AdmissionPlugin {
  readonly name = 'AlwaysPullImages';

  mutate(r: AdmissionRequest): void {
    const pod = podWritten(r);
    if (!pod || !bringsNewImage(r, pod)) return;
    for (const [container] of containersOf(pod.spec)) container.imagePullPolicy = 'Always';
  }

  validate(r: AdmissionRequest): void {
    const pod = podWritten(r);
    if (!pod || !bringsNewImage(r, pod)) return;
    const wrong = [...containersOf(pod.spec)].filter(([c]) => c.imagePullPolicy !== 'Always')
      .map(([c, at]) => fieldErrors.notSupported(`${at}.imagePullPolicy`, c.imagePullPolicy ?? '', ['Always']).describe());
    if (!wrong.length) return;
    throw forbiddenRequest(r, wrong.length === 1 ? wrong[0]! : `[${wrong.join(', ')}]`);
  }
}
