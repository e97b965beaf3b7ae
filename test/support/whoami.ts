// A review object that answers who asked: the user name and groups the
// server's authentication gave the request. Tests add it to a registry to see
// what an authenticator decided, as upstream's SelfSubjectReview shows it.

import { defineKind, type KindDefinition, type KubeObject } from '../../src/api/kind.js';
import { t } from '../../src/api/schema.js';
import * as meta from '../../src/api/meta/v1.js';
import { productGroup } from '../../src/machinery/vocabulary.js';
import { reviewResource, type RestObject } from '../../src/registry/rest.js';

const group = productGroup('whoami-test');

export const whoAmIs: KindDefinition = defineKind({
  group, version: 'v1', kind: 'WhoAmI', plural: 'whoamis', scope: 'Cluster', verbs: ['create'],
  definitionName: 'test.whoami.v1.WhoAmI',
  schema: t.object({
    apiVersion: t.string(), kind: t.string(), metadata: { ref: meta.ObjectMeta },
    status: t.object({ username: t.string(), groups: t.array(t.string()) }),
  }),
});

export const whoAmIPath = `/apis/${group}/v1/whoamis`;
export const whoAmIBody = { apiVersion: `${group}/v1`, kind: 'WhoAmI' };

/** The review; `onReview` hears of every review answered (to see whether the handler was reached). */
export function whoAmIRest(onReview: (review: KubeObject) => void = () => undefined): RestObject {
  return reviewResource(whoAmIs, (review, user) => {
    onReview(review);
    return { username: user?.username ?? '', groups: user?.groups ?? [] };
  });
}
