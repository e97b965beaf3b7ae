// Types shared by several core v1 kinds, and helpers for their declarations.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { ageOf } from '../../../machinery/time.js';
import { define, p, t, Schema } from '../../schema.js';
import { ObjectMeta } from '../../meta/v1.js';
import type { KubeObject, PrinterColumn } from '../../kind.js';

export const core = (name: string) => `${definitionPrefix}.api.core.v1.${name}`;

export const ObjectReference = define(core('ObjectReference'), t.object({
  kind: p(1, t.string('Kind of the referent.')),
  namespace: p(2, t.string('Namespace of the referent.')),
  name: p(3, t.string('Name of the referent.')),
  uid: p(4, t.string('UID of the referent.')),
  apiVersion: p(5, t.string('API version of the referent.')),
  resourceVersion: p(6, t.string('Specific resourceVersion the reference is about, if any.')),
  fieldPath: p(7, t.string('A field inside the referent, when the reference points at part of it, e.g. spec.containers{name}.')),
}, 'Enough information to find and inspect another object.', { mapType: 'atomic' }));

/** Who reported an event (core Event's source; the events group's deprecatedSource). */
export const EventSource = define(core('EventSource'), t.object({
  component: p(1, t.string('Component that reported the event.')),
  host: p(2, t.string('Node on which the event was generated.')),
}, 'Who reported an event.'));

export const LocalObjectReference = define(core('LocalObjectReference'), t.object({
  // Upstream declares "" as its default (server-side apply keys imagePullSecrets by it).
  name: p(1, t.string('Name of the referent in the same namespace.', { default: '' })),
}, 'Names another object in the same namespace.', { mapType: 'atomic' }));

/** The schema of a top-level kind: apiVersion, kind, metadata plus its own fields. */
export function kindSchema(description: string, fields: Record<string, Schema>, required?: string[]): Schema {
  return t.object({
    apiVersion: t.string('Schema version of this representation; the server converts to its own.'),
    kind: t.string('REST resource this object represents; CamelCase.'),
    metadata: p(1, t.ref(ObjectMeta, 'Standard object metadata.')),
    ...fields,
  }, description, required ? { required } : {});
}

export const ageColumn: PrinterColumn = {
  name: 'Age', type: 'string', description: 'Time since the object was created.',
  value: (o: KubeObject) => ageOf(o.metadata?.creationTimestamp),
};

export const nameColumn: PrinterColumn = {
  name: 'Name', type: 'string', format: 'name', description: 'Name of the object.',
  value: (o: KubeObject) => o.metadata?.name,
};

/** Upstream caps the data of a Secret or ConfigMap at 1 MiB. */
export const maxDataSize = 1024 * 1024;
