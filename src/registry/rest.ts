// REST objects: what one resource path or one sub-resource path serves, as
// small capabilities (get, list, watch, create, update, patch, delete,
// deletecollection). Routes, discovery verbs and OpenAPI operations all
// follow from which capabilities an object has, so they cannot disagree.
//
// Built here: a stored kind's main resource, its sub-resources (a part of the
// object such as status, or a view of it as another kind such as scale), and
// objects that store nothing: reviews (a create answered in `status`) and
// create sub-resources answering with another kind (a token request).

import { errors } from '../machinery/errors.js';
import type { UserInfo } from '../machinery/user.js';
import { allVerbs, apiVersionOf, type KindDefinition, type KubeObject, type PartSubresource, type Verb, type ViewSubresource } from '../api/kind.js';
import type { AnsweredCreate, DeleteOptions, DeleteResult, ListOptions, RequestScope, ResourceStore, Sent, SentPatch, WriteOptions, Written } from './store.js';
import { decodeOptions } from './writeoptions.js';
import { computed } from './changes.js';
import type { StoredList, StoredObject } from './objects.js';
import type { ActiveWatch, WatchSink } from './watch.js';
import { decodeObject } from '../api/decode.js';
import type { VersionCodec } from '../api/codec.js';
import type { ConnectOptionsKind } from '../api/core/v1/connectoptions.js';
import { materializeList } from './objects.js';
import { applyPatch, patchPrecondition } from './patch.js';

/** Where a request points: the namespace and name of the path (sub-resources: the parent's name). */
export interface RestPath {
  namespace?: string;
  name?: string;
  /** The request's query, for sub-resources that take their options from it (log, exec, proxy). */
  query?: URLSearchParams;
}

/** What discovery and OpenAPI say of a REST object. */
export interface RestDescription {
  group: string;
  version: string;
  /** The resource's plural (a sub-resource's parent's). */
  resource: string;
  subresource?: string;
  namespaced: boolean;
  /** The kind requests send and answers carry. */
  kind: KindDefinition;
  /** The kind whose objects the path names (a sub-resource's parent); `kind` otherwise. */
  parentKind: KindDefinition;
  /** A DELETE answers with the object (true) or with a Success Status. */
  deleteAnswersObject: boolean;
  /** Objects of this resource are stored (discovery gives them a storage version hash). */
  stored: boolean;
  /**
   * Set when the path names a version other than the stored one: objects in
   * answers and watch events are converted by it (capabilities answer stored
   * StoredObjects and watch events; the rest of their answers are converted).
   */
  codec?: VersionCodec;
}

export type { Written } from './store.js';

export interface Capabilities {
  get(path: RestPath, resourceVersion: string | null): Promise<StoredObject | KubeObject>;
  /** Stored lists go out from their stored bytes; a list converted to another version is an object. */
  list(path: RestPath, opts: ListOptions): Promise<StoredList | KubeObject>;
  watch(path: RestPath, opts: ListOptions & { maxBuffered?: number }, sink: WatchSink): Promise<ActiveWatch>;
  create(path: RestPath, body: Sent, opts: WriteOptions, scope: RequestScope): Promise<KubeObject>;
  update(path: RestPath, body: Sent, opts: WriteOptions, scope: RequestScope): Promise<Written>;
  patch(path: RestPath, patch: SentPatch, opts: WriteOptions, scope: RequestScope): Promise<Written>;
  delete(path: RestPath, options: DeleteOptions, scope: RequestScope): Promise<DeleteResult>;
  deleteCollection(path: RestPath, listOpts: ListOptions, options: DeleteOptions, scope: RequestScope): Promise<KubeObject>;
}

/**
 * A connect sub-resource (log, exec, attach, portforward, proxy): one
 * function for every verb it serves, taking its options from the query and
 * answering an object or text. The node-agent ones here never dial anything.
 */
export interface Connector {
  verbs: Verb[];
  /**
   * A CONNECT sub-resource (exec, attach, portforward, proxy; not log, a
   * read): admission runs on its options, of this kind, before `connect`.
   */
  admitted?: ConnectOptionsKind;
  /**
   * Whatever the method, the caller must also be allowed to `create` the
   * sub-resource: a websocket opens exec, attach and portforward with a GET,
   * which authorization sees as `get` (upstream's
   * AuthorizePodWebsocketUpgradeCreatePermission).
   */
  requiresCreate?: boolean;
  connect(path: RestPath, verb: Verb): Promise<KubeObject | { text: string }>;
}

export type RestObject = { readonly describe: RestDescription } & Partial<Capabilities> & { connector?: Connector };

/** The capability that serves each verb. */
export const capabilityOf: Record<Verb, keyof Capabilities> = {
  get: 'get', list: 'list', watch: 'watch', create: 'create', update: 'update', patch: 'patch', delete: 'delete', deletecollection: 'deleteCollection',
};

/** The verbs a REST object serves: exactly its capabilities. */
export function verbsOf(rest: RestObject): Verb[] {
  if (rest.connector) return [...rest.connector.verbs];
  return allVerbs.filter((v) => typeof rest[capabilityOf[v]] === 'function');
}

/** Identifies a REST object in the registry: group/version/resource[/subresource]. */
export function restId(group: string, version: string, resource: string, subresource?: string): string {
  return subresource === undefined ? `${group}/${version}/${resource}` : `${group}/${version}/${resource}/${subresource}`;
}

export function idOf(rest: RestObject): string {
  const d = rest.describe;
  return restId(d.group, d.version, d.resource, d.subresource);
}

function describeKind(kind: KindDefinition, extra: Partial<RestDescription> = {}): RestDescription {
  const d: RestDescription = {
    group: kind.group, version: kind.version, resource: kind.plural, namespaced: kind.scope === 'Namespaced',
    kind, parentKind: kind, deleteAnswersObject: kind.deleteReturnsObject, stored: true, ...extra,
  };
  if (d.codec === undefined) delete d.codec;
  return d;
}

/** How admission sees a create a REST object answers without storing it: its kind on its URL's resource. */
export function answeredAs(d: RestDescription): AnsweredCreate {
  return { kind: d.kind, resource: { group: d.group, version: d.version, resource: d.resource }, ...(d.subresource ? { subresource: d.subresource } : {}) };
}

/** A list in the codec's version: one conversion for all its items. */
async function servedListAt(codec: VersionCodec, list: KubeObject): Promise<KubeObject> {
  if (!codec.convertsLater) return codec.fromStoredList(list);
  return { ...list, apiVersion: codec.apiVersion, items: await codec.fromStoredAll(list.items ?? []) };
}

/** A write's answer in the codec's version. */
const convertedWritten = (codec: VersionCodec) => async (w: Written): Promise<Written> => ({ object: await codec.fromStoredOne(w.object), created: w.created });

/** Keeps only the capabilities whose verbs are listed. */
function only(verbs: readonly Verb[], all: Partial<Capabilities>): Partial<Capabilities> {
  const kept: Partial<Capabilities> = {};
  for (const verb of verbs) {
    const name = capabilityOf[verb];
    if (all[name]) (kept as Record<string, unknown>)[name] = all[name];
  }
  return kept;
}

/**
 * The main resource of a stored kind: the verbs the kind declares. With a
 * codec it serves that codec's version: bodies are decoded at it and
 * converted to the stored shape, answers converted back.
 */
export function storedResource(store: ResourceStore, codec?: VersionCodec): RestObject {
  const kind = codec?.served ?? store.kind;
  const describe = describeKind(kind, { codec });
  if (!codec) {
    return {
      describe,
      ...only(store.kind.verbs, {
        get: (p, rv) => store.getStored(p.namespace, p.name!, rv),
        list: (p, opts) => store.listStored(p.namespace, opts),
        watch: (p, opts, sink) => store.watch(p.namespace, opts, sink),
        create: (p, body, opts, scope) => store.create(p.namespace, body, opts, scope),
        update: (p, body, opts, scope) => store.update(p.namespace, p.name!, body, opts, scope),
        patch: (p, patch, opts, scope) => store.patch(p.namespace, p.name!, patch, opts, scope),
        delete: (p, options, scope) => store.delete(p.namespace, p.name!, options, scope),
        deleteCollection: (p, listOpts, options, scope) => store.deleteCollection(p.namespace, listOpts, options, scope),
      }),
    };
  }
  const out = convertedWritten(codec);
  const at = { codec };
  return {
    describe,
    ...only(store.kind.verbs, {
      get: async (p, rv) => codec.fromStoredOne((await store.getStored(p.namespace, p.name!, rv)).object),
      // Field selectors name fields as this version does.
      list: async (p, opts) => servedListAt(codec, materializeList(await store.listStored(p.namespace, { ...opts, version: codec }))),
      // Events go out converted by the watch encoder, once per version for every watcher of it.
      watch: (p, opts, sink) => store.watch(p.namespace, { ...opts, version: codec }, sink),
      create: async (p, body, opts, scope) => codec.fromStoredOne(await store.create(p.namespace, body, opts, scope, at)),
      update: async (p, body, opts, scope) => out(await store.update(p.namespace, p.name!, body, opts, scope, at)),
      patch: async (p, patch, opts, scope) => out(await store.patch(p.namespace, p.name!, patch, opts, scope, at)),
      delete: async (p, options, scope) => {
        const r = await store.delete(p.namespace, p.name!, options, scope, at);
        return { ...r, object: await codec.fromStoredOne(r.object) };
      },
      deleteCollection: async (p, listOpts, options, scope) => servedListAt(codec, await store.deleteCollection(p.namespace, { ...listOpts, version: codec }, options, scope, at)),
    }),
  };
}

/** A sub-resource that is part of the parent (status, finalize): writes change only what it owns. */
export function partSubresource(store: ResourceStore, name: string, declaration: PartSubresource, codec?: VersionCodec): RestObject {
  const target = { subresource: name, ...(codec ? { codec } : {}) };
  const describe = describeKind(codec?.served ?? store.kind, { subresource: name, deleteAnswersObject: false, codec });
  // Answers go out in the version the path names.
  const out = codec ? convertedWritten(codec) : async (w: Written) => w;
  const read = codec ? async (p: RestPath, rv: string | null) => codec.fromStoredOne((await store.getStored(p.namespace, p.name!, rv)).object)
    : (p: RestPath, rv: string | null) => store.getStored(p.namespace, p.name!, rv);
  return {
    describe,
    ...only(declaration.verbs, {
      get: read,
      update: async (p, body, opts, scope) => out(await store.update(p.namespace, p.name!, body, opts, scope, target)),
      patch: async (p, patch, opts, scope) => out(await store.patch(p.namespace, p.name!, patch, opts, scope, target)),
    }),
  };
}

/** A sub-resource that shows the parent as another kind (scale): writes go back through `applyView`, pinned to the version the view carried. */
export function viewSubresource(store: ResourceStore, name: string, declaration: ViewSubresource, codec?: VersionCodec): RestObject {
  const target = { subresource: name };
  const viewKind = declaration.kind;
  const decodeView = (body: Sent, opts: WriteOptions, scope: RequestScope) => decodeObject(viewKind, body.value, decodeOptions(body, opts, scope));
  const answer = (written: Written) => ({ object: declaration.view(written.object), created: false });
  return {
    // The view is made from the stored object whatever version the path names.
    describe: describeKind(codec?.served ?? store.kind, { subresource: name, kind: viewKind, deleteAnswersObject: false }),
    ...only(declaration.verbs, {
      get: async (p, rv) => declaration.view(await store.get(p.namespace, p.name!, rv)),
      update: async (p, body, opts, scope) => {
        const sent = decodeView(body, opts, scope);
        return answer(await store.change(p.namespace, p.name!, computed((live) => declaration.applyView(live, sent), sent.metadata?.resourceVersion), opts, scope, target));
      },
      patch: async (p, patch, opts, scope) => {
        if (patch.type === 'apply') throw errors.unsupportedMediaType('application/apply-patch+yaml', ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
        const type = patch.type;
        return answer(await store.change(p.namespace, p.name!, {
          creates: false,
          make: async (live) => {
            const view = declaration.view(live!);
            const patched = decodeView({ ...patch, value: applyPatch(type, viewKind, structuredClone(view), patch.value) }, opts, scope);
            const pinned = patchPrecondition(type, patch.value, view, patched);
            return { object: declaration.applyView(structuredClone(live!), patched), tracked: false, ...(pinned !== undefined ? { pinned } : {}) };
          },
        }, opts, scope, target));
      },
    }),
  };
}

/** Answers a review: the `status` of the reviewed object, from its spec and who asks. */
export type Reviewer = (review: KubeObject, user: UserInfo | undefined, path: RestPath) => Promise<Record<string, unknown>> | Record<string, unknown>;

/**
 * A review (TokenReview, SubjectAccessReview, ...): a create that decodes and
 * validates the object like any other, answers it with `status` filled in
 * (201), and stores nothing.
 */
export function reviewResource(kind: KindDefinition, reviewer: Reviewer): RestObject {
  return {
    describe: describeKind(kind, { stored: false }),
    create: async (path, body, opts, scope) => {
      const review = decodeObject(kind, body.value, decodeOptions(body, opts, scope));
      const errs = kind.strategy.validate?.(review) ?? [];
      if (errs.length) throw errors.invalid(kind.group, kind.kind, review.metadata?.name ?? '', errs);
      if (kind.scope === 'Namespaced') {
        if (review.metadata!.namespace && path.namespace && review.metadata!.namespace !== path.namespace) {
          throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
        review.metadata!.namespace = path.namespace;
      }
      review.status = await reviewer(review, scope.user, path);
      return review;
    },
  };
}

/** Answers a create sub-resource (a token request): an object of `kind`, made for the parent named in the path. */
export type SubresourceCreator = (parent: KubeObject, request: KubeObject, scope: RequestScope) => Promise<KubeObject> | KubeObject;

/** A sub-resource whose POST takes and answers another kind than its parent's, and stores nothing itself. */
export function createSubresource(store: ResourceStore, name: string, kind: KindDefinition, creator: SubresourceCreator): RestObject {
  const describe = describeKind(store.kind, { subresource: name, kind, deleteAnswersObject: false, stored: false });
  return {
    describe,
    create: async (p, body, opts, scope) => {
      const request = await store.admitAnswered(answeredAs(describe), p.name!, p.namespace, decodeObject(kind, body.value, decodeOptions(body, opts, scope)), opts, scope);
      const parent = await store.get(p.namespace, p.name!);
      const answer = await creator(parent, request, scope);
      answer.apiVersion ??= apiVersionOf(kind);
      answer.kind ??= kind.kind;
      return answer;
    },
  };
}
