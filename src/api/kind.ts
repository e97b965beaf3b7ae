// defineKind: the single declaration of a resource type. Routes, discovery,
// OpenAPI, validation, defaulting and pruning are all derived from it.

import type { FieldError } from '../machinery/errors.js';
import type { UserInfo } from '../machinery/user.js';
import { isDns1123Subdomain, type NameCheck } from '../machinery/validation.js';
import type { Schema } from './schema.js';

export type Scope = 'Namespaced' | 'Cluster';

/** An object as JSON; kinds read their own fields from it. */
export type KubeObject = Record<string, any> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, any>;
};

/** The per-kind logic around the generic store. Every hook is optional. */
export interface Strategy {
  /** Fill defaults of omitted fields (also run when reading older stored shapes). */
  defaults?(obj: KubeObject): void;
  /** Before validation on create: clear or set server-owned fields (some record who asks: `user`). */
  prepareForCreate?(obj: KubeObject, user?: UserInfo): void;
  /** Before validation on an update of the main resource (sub-resources change only what they own). */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  validate?(obj: KubeObject): FieldError[];
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /**
   * What the kind's validation needs loaded that the server loads on first
   * need (CEL, RE2: validation/engines.ts), for this object; awaited before a
   * write's object is decoded and validated. Undefined when nothing is to load.
   */
  load?(obj: KubeObject): Promise<void> | undefined;
  /** Beyond metadata.finalizers: whether the kind's own state keeps a deleted object (namespace spec.finalizers). */
  holdsDeletion?(obj: KubeObject): boolean;
  /** When a held object starts deleting (e.g. a namespace turns Terminating). */
  markDeleting?(obj: KubeObject): void;
  /**
   * Kinds with graceful deletion (pods, upstream's CheckGracefulDelete): the
   * seconds an object being deleted is given to terminate, from the request's
   * gracePeriodSeconds (already non-negative) and the object; 0 removes it now.
   */
  gracePeriod?(obj: KubeObject, requested: number | undefined): number;
  /** Warnings sent to the client in Warning headers. */
  warnings?(obj: KubeObject, old?: KubeObject): string[];
}

/**
 * A sub-resource that is part of its parent object: reads answer the parent;
 * an update or patch through it changes only the fields it `owns` (dotted
 * paths), and writes to the main resource keep those fields as stored.
 */
export interface PartSubresource {
  owns: string[];
  /** No verbs: a part only the server writes (a pod's binding), served by a REST object of the registry, not routed as a part. */
  verbs: ('get' | 'update' | 'patch')[];
  /** A create leaves the owned fields empty, whatever the client sent (status, as upstream). */
  resetOnCreate?: boolean;
  /** Before validation on a write through this sub-resource (the kind's own rules for what it may change). */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /**
   * For a part that is not whole fields (each container's resources): the
   * new object from what was sent and what is stored, in place of copying
   * the `owns` paths.
   */
  merge?(sent: KubeObject, stored: KubeObject): KubeObject;
  /** Validates a write through this sub-resource, in place of the strategy's `validateUpdate`. */
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
}

/**
 * A sub-resource that shows its parent as another kind (scale): reads answer
 * `view(parent)`; an update or patch of the view is written back with
 * `applyView`, which changes only what the view stands for.
 */
export interface ViewSubresource {
  kind: KindDefinition;
  verbs: ('get' | 'update' | 'patch')[];
  view(parent: KubeObject): KubeObject;
  applyView(parent: KubeObject, view: KubeObject): KubeObject;
}

export type SubresourceDeclaration = PartSubresource | ViewSubresource;

export function isViewSubresource(d: SubresourceDeclaration): d is ViewSubresource {
  return 'view' in d;
}

/** The status sub-resource as upstream serves it for every kind that has one. */
export const statusSubresource: PartSubresource = { owns: ['status'], verbs: ['get', 'update', 'patch'], resetOnCreate: true };

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** Shown only with -o wide. */
  priority?: number;
  /** Value of the column for one object. */
  value(obj: KubeObject): unknown;
}

/**
 * One version at which a kind is served. The stored version is the hub:
 * every other version carries two small functions that convert an object of
 * it to the stored shape and back (pure, synchronous, each answering a new
 * object). There is no internal copy of any type.
 */
export interface KindVersion {
  /**
   * The group the version is served in: the kind's own, or another one when
   * the same stored objects are also served there under another shape (core
   * Event, also served as the events group's v1 Event).
   */
  group: string;
  name: string;
  /** Whether clients can reach the kind at this version. */
  served: boolean;
  deprecated: boolean;
  /** Warning sent with every answer at a deprecated version (upstream's wording from the fields below when absent). */
  deprecationWarning?: string;
  /** The release (`1.19`) that deprecated the version, for the warning. */
  deprecatedRelease?: string;
  /** What to use instead, for the warning (a `<group>/<version> <Kind>`). */
  replacement?: string;
  /** The release (`1.25`) that removes the version; from then on it is not served. */
  removedRelease?: string;
  /** Served without `--runtime-config` asking (absent: unless the version is alpha, as upstream). */
  enabledByDefault?: boolean;
  /** A custom resource's version: its `served` flag alone decides, as upstream applies `--runtime-config` to built-in APIs only. */
  customResource?: boolean;
  schema: Schema;
  printerColumns: PrinterColumn[];
  fieldSelectors: Record<string, (obj: KubeObject) => string>;
  definitionName: string;
  listDefinitionName: string;
  /** An object of this version in the stored version's shape (absent for the stored version). */
  toStored?(obj: KubeObject): KubeObject;
  /** An object of the stored version in this version's shape (absent for the stored version). */
  fromStored?(obj: KubeObject): KubeObject;
  /** Rules every write of a whole object through this version must meet (in its shape), beyond the kind's own. */
  validate?(obj: KubeObject): FieldError[];
  /** Conversions that answer later (a custom resource's conversion webhook), in place of toStored and fromStored; see VersionCodec.ahead. */
  convertsLater?: LaterConversion;
}

/** Conversions made by someone else (a webhook): objects are converted ahead of the codec's synchronous steps. */
export interface LaterConversion {
  /** Objects of one version converted to `apiVersion`, in order; a failure is an ApiError (a 500 naming the converter). */
  convert(objects: KubeObject[], apiVersion: string): Promise<KubeObject[]>;
}

/** A version as a declaration gives it: its name and schema; the rest has defaults (the group: the kind's). */
export type VersionDeclaration = Pick<KindVersion, 'name' | 'schema'> & Partial<Omit<KindVersion, 'name' | 'schema'>>;

export interface KindDefinition {
  /** '' for the core group. */
  group: string;
  /**
   * The version objects are stored in (the hub). `schema`, `printerColumns`,
   * `fieldSelectors` and the definition names are that version's; `kindAt`
   * gives the kind as another served version sees it.
   */
  version: string;
  /** Every version of the kind, the stored one included. */
  versions: KindVersion[];
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  scope: Scope;
  /** Rule for metadata.name (most kinds: a DNS subdomain). */
  nameCheck: NameCheck;
  /** Name of the OpenAPI definition of the kind: its schema's name (see `define`) unless given. */
  definitionName: string;
  listDefinitionName: string;
  schema: Schema;
  /** Sub-resources served at {name}/<sub-resource>, by name (status, a namespace's finalize, scale, ...). */
  subresources: Record<string, SubresourceDeclaration>;
  /** Objects travel as protobuf too (built-in kinds); custom kinds answer 415/406 for it, as upstream. */
  protobuf: boolean;
  strategy: Strategy;
  printerColumns: PrinterColumn[];
  /** Field selectors beyond metadata.name / metadata.namespace: field path -> value. */
  fieldSelectors: Record<string, (obj: KubeObject) => string>;
  /**
   * Fields of `fieldSelectors` the watch cache indexes, as upstream's does
   * (pods by spec.nodeName): an exact selector on one reads only its matches.
   */
  indexedFieldSelectors?: string[];
  /** DELETE answers with the deleted object (true) or a Success Status (false), as upstream does per kind. */
  deleteReturnsObject: boolean;
  /** Strategic merge patches apply (built-in kinds); custom kinds answer 415 for them, as upstream. */
  strategicMerge: boolean;
  /** A PUT to a missing object creates it (upstream's AllowCreateOnUpdate); otherwise 404. */
  createOnUpdate: boolean;
  /** metadata.generation is set on create and bumped when anything but metadata and status changes. */
  tracksGeneration: boolean;
  /** Verbs the kind offers. */
  verbs: Verb[];
  /**
   * Stored objects last written at or before this revision are defaulted
   * again when read, their stored bytes not served as they are: the kind's
   * defaults may have changed since (a custom kind whose definition
   * changed). Absent: stored objects carry the kind's defaults.
   */
  readDefaultsThrough?: number;
}

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export const allVerbs: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export type KindDeclaration = Omit<KindDefinition, 'listKind' | 'singular' | 'shortNames' | 'categories' | 'subresources'
  | 'strategy' | 'nameCheck' | 'printerColumns' | 'fieldSelectors' | 'deleteReturnsObject' | 'strategicMerge' | 'createOnUpdate' | 'tracksGeneration' | 'verbs' | 'protobuf' | 'listDefinitionName' | 'definitionName' | 'versions'>
  & Partial<Omit<KindDefinition, 'versions'>>
  & {
    /** The versions besides the stored one (`version`, with `schema`), each with its conversions. */
    otherVersions?: VersionDeclaration[];
    /** Whether the stored version is served, deprecated, removed (served and current unless said). */
    storedVersion?: Partial<Pick<KindVersion, 'served' | 'deprecated' | 'deprecationWarning' | 'deprecatedRelease' | 'replacement' | 'removedRelease' | 'enabledByDefault' | 'customResource'>>;
  };

export function defineKind(declaration: KindDeclaration): KindDefinition {
  const { otherVersions = [], storedVersion = {}, ...d } = declaration;
  const definitionName = d.definitionName ?? d.schema.name;
  if (!definitionName) throw new Error(`kind ${d.kind}: its schema needs a name (define) or a definitionName`);
  const stored: KindVersion = {
    group: d.group, name: d.version, served: true, deprecated: false, schema: d.schema, printerColumns: d.printerColumns ?? [], fieldSelectors: d.fieldSelectors ?? {},
    definitionName, listDefinitionName: d.listDefinitionName ?? `${definitionName}List`, ...storedVersion,
  };
  const others = otherVersions.map((v): KindVersion => {
    if (!v.toStored || !v.fromStored) throw new Error(`kind ${d.kind}: version ${v.name} needs toStored and fromStored`);
    const name = v.definitionName ?? v.schema.name;
    if (!name) throw new Error(`kind ${d.kind}: the schema of version ${v.name} needs a name (define) or a definitionName`);
    return {
      group: d.group, served: true, deprecated: false, printerColumns: stored.printerColumns, fieldSelectors: stored.fieldSelectors,
      listDefinitionName: `${name}List`, ...v, definitionName: name,
    };
  });
  const names = [stored, ...others].map((v) => apiVersionOf({ group: v.group, version: v.name }));
  if (new Set(names).size !== names.length) throw new Error(`kind ${d.kind}: a version is declared twice (${names.join(', ')})`);
  return {
    definitionName,
    listKind: `${d.kind}List`,
    singular: d.kind.toLowerCase(),
    shortNames: [],
    categories: [],
    subresources: {},
    strategy: {},
    nameCheck: isDns1123Subdomain,
    printerColumns: [],
    fieldSelectors: {},
    deleteReturnsObject: false,
    strategicMerge: true,
    protobuf: false,
    createOnUpdate: false,
    tracksGeneration: false,
    verbs: allVerbs,
    listDefinitionName: `${definitionName}List`,
    ...d,
    // Built here from the declaration (a declaration made from another kind carries that kind's list).
    versions: [stored, ...others],
  };
}

/** Memo of kindAt: one view per kind and version, so that identity comparisons and caches keyed by kind hold. */
const versionViews = new WeakMap<KindDefinition, Map<KindVersion, KindDefinition>>();

/**
 * The kind as clients see it at one of its versions: that version's group,
 * schema, columns, field selectors and definition names, everything else
 * shared. The stored version is the kind itself.
 */
export function kindAt(kind: KindDefinition, v: KindVersion): KindDefinition {
  if (v.name === kind.version && v.group === kind.group) return kind;
  let views = versionViews.get(kind);
  if (!views) versionViews.set(kind, (views = new Map()));
  let view = views.get(v);
  if (!view) {
    view = {
      ...kind, group: v.group, version: v.name, schema: v.schema, printerColumns: v.printerColumns, fieldSelectors: v.fieldSelectors,
      definitionName: v.definitionName, listDefinitionName: v.listDefinitionName,
      // Short names and categories belong to the resource in its own group (`kubectl get ev` is core's events).
      ...(v.group === kind.group ? {} : { shortNames: [], categories: [] }),
    };
    views.set(v, view);
  }
  return view;
}

/** The versions of a kind clients can reach, the stored one first. */
export function servedVersions(kind: KindDefinition): KindVersion[] {
  return kind.versions.filter((v) => v.served);
}

/** The declared version of a kind served as `group`/`version`, if any (a view from kindAt keeps the kind's versions). */
export function declaredVersion(kind: KindDefinition, group: string, version: string): KindVersion | undefined {
  return kind.versions.find((v) => v.group === group && v.name === version);
}

export function apiVersionOf(k: Pick<KindDefinition, 'group' | 'version'>): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}
