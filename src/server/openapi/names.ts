// Names used in the OpenAPI documents: our own extension keys (built from the
// vocabulary), the upstream keys the unmodified kubectl reads, media types,
// and the upstream-style operation ids and tags.

import { product, upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';

const ours = (name: string) => `${vocabulary.openapiExtensionPrefix}${name}`;

/** Extension keys we emit; each product key has an upstream twin where kubectl needs one. */
export const ext = {
  gvk: ours('group-version-kind'),
  action: ours('action'),
  listType: ours('list-type'),
  listMapKeys: ours('list-map-keys'),
  mapType: ours('map-type'),
  patchMergeKey: ours('patch-merge-key'),
  patchStrategy: ours('patch-strategy'),
} as const;

/**
 * Upstream extension keys: client wire compatibility, not product names. kubectl
 * finds a kind's schema by the GVK key and reads the patch keys for client-side
 * apply (strategic merge); explain reads the int-or-string / preserve markers.
 */
export const upstreamExt = {
  gvk: upstreamCompat.groupVersionKindExtension,
  action: 'x-kubernetes-action',
  patchMergeKey: 'x-kubernetes-patch-merge-key',
  patchStrategy: 'x-kubernetes-patch-strategy',
  intOrString: 'x-kubernetes-int-or-string',
  preserveUnknownFields: 'x-kubernetes-preserve-unknown-fields',
  embeddedResource: 'x-kubernetes-embedded-resource',
} as const;

export const mediaTypes = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: vocabulary.protobufMediaType,
  jsonWatch: 'application/json;stream=watch',
  protobufWatch: `${vocabulary.protobufMediaType};stream=watch`,
  jsonPatch: 'application/json-patch+json',
  mergePatch: 'application/merge-patch+json',
  strategicMergePatch: 'application/strategic-merge-patch+json',
  applyPatch: 'application/apply-patch+yaml',
  /** What client-go asks for and proto-decodes (a gnostic openapi_v2.Document). */
  openapiV2Protobuf: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  /** The newer spelling of the same type, accepted as an alias. */
  openapiV2ProtobufAlias: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
} as const;

/** Title of the documents: the product name, capitalised. */
export const documentTitle = product.name.charAt(0).toUpperCase() + product.name.slice(1);

/** `authentication.<domain>` -> `authentication`; foreign groups stay whole. */
function groupStem(group: string): string {
  const suffix = `.${product.domain}`;
  return group.endsWith(suffix) ? group.slice(0, -suffix.length) : group;
}

const capitalize = (s: string) => (s ? s.charAt(0).toUpperCase() + s.slice(1) : s);

/** The group-version part of operation ids: `CoreV1`, `RbacAuthorizationV1`. */
export function operationGroupVersion(group: string, version: string): string {
  const stem = group === '' ? 'core' : groupStem(group);
  return stem.split(/[.-]/).map(capitalize).join('') + capitalize(version);
}

/** Operation tag, upstream style: `core_v1`, `rbacAuthorization_v1`. */
export function operationTag(group: string, version: string): string {
  const stem = group === '' ? 'core' : groupStem(group);
  const parts = stem.split(/[.-]/);
  return parts[0] + parts.slice(1).map(capitalize).join('') + '_' + version;
}

/** Key of a group version in the v3 index and its document URL: `api/v1`, `apis/<group>/<version>`. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}
