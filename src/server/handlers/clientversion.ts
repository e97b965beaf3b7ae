// A typed upstream client (kubectl create role, kubectl auth can-i) names a
// group by its upstream name in the path and in the bodies it sends, and
// decodes answers only in the version it asked for: the request's
// UpstreamName (api/codec.ts) takes its bodies as ours and relabels answers.

import type { KubeObject } from '../../api/kind.js';
import { UpstreamName } from '../../api/codec.js';
import type { RequestInfo } from '../requestinfo.js';
import { materializeList, StoredObject, type StoredList } from '../../registry/objects.js';

/** The upstream name a request used for one of our groups, if it did. */
export function upstreamNameOf(info: RequestInfo): UpstreamName | undefined {
  return info.clientGroup === undefined ? undefined : new UpstreamName(`${info.clientGroup}/${info.apiVersion}`, `${info.apiGroup}/${info.apiVersion}`);
}

/** A stored object or list as an answer in the client's name. */
export function storedAsTheirs(value: StoredObject | StoredList, name: UpstreamName): KubeObject {
  return name.answerAsTheirs(value instanceof StoredObject ? value.object : materializeList(value));
}
