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
  /** Beyond metadata.finalizers: whether the kind's own state keeps a deleted object (namespace spec.finalizers). */
  holdsDeletion?(obj: KubeObject): boolean;
  /** When a held object starts deleting (e.g. a namespace turns Terminating). */
  markDeleting?(obj: KubeObject): void;
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
  verbs: ('get' | 'update' | 'patch')[];
  /** A create leaves the owned fields empty, whatever the client sent (status, as upstream). */
  resetOnCreate?: boolean;
  /** Before validation on a write through this sub-resource (the kind's own rules for what it may change). */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
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

export interface KindDefinition {
  /** '' for the core group. */
  group: string;
  version: string;
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
}

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export const allVerbs: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export type KindDeclaration = Omit<KindDefinition, 'listKind' | 'singular' | 'shortNames' | 'categories' | 'subresources'
  | 'strategy' | 'nameCheck' | 'printerColumns' | 'fieldSelectors' | 'deleteReturnsObject' | 'strategicMerge' | 'createOnUpdate' | 'tracksGeneration' | 'verbs' | 'protobuf' | 'listDefinitionName' | 'definitionName'>
  & Partial<KindDefinition>;

export function defineKind(d: KindDeclaration): KindDefinition {
  const definitionName = d.definitionName ?? d.schema.name;
  if (!definitionName) throw new Error(`kind ${d.kind}: its schema needs a name (define) or a definitionName`);
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
  };
}

export function apiVersionOf(k: Pick<KindDefinition, 'group' | 'version'>): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}
