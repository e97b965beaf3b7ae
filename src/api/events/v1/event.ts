// Event as the events group serves it: the same stored objects as core v1
// Event (one storage, as upstream), in the newer shape. `regarding` and `note`
// are core's `involvedObject` and `message`, `reportingController` is
// `reportingComponent`, and core's source, first and last timestamps and
// count carry a `deprecated` prefix; a write through this group must name
// who reports and what happened, and may not set the deprecated fields.

import { define, p, t } from '../../schema.js';
import type { KubeObject, PrinterColumn, VersionDeclaration } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, isQualifiedName } from '../../../machinery/validation.js';
import { definitionPrefix, vocabulary } from '../../../machinery/vocabulary.js';
import { renameKeys } from '../../../machinery/ownkeys.js';
import { MicroTime, Time } from '../../meta/v1.js';
import { EventSource, kindSchema, ObjectReference } from '../../core/v1/common.js';

const named = (name: string) => `${definitionPrefix}.api.events.v1.${name}`;

const EventSeries = define(named('EventSeries'), t.object({
  count: p(1, { ...t.int32('Occurrences in this series up to the last heartbeat.'), default: 0 }, 'always'),
  lastObservedTime: p(2, t.ref(MicroTime, 'When the last occurrence was seen before the last heartbeat.'), 'always'),
}, 'A series of repeated events.'));

const schema = define(named('Event'), kindSchema('A report of something that happened somewhere in the cluster.', {
  eventTime: p(2, t.ref(MicroTime, 'When the event was first observed; required.'), 'always'),
  series: p(3, t.ref(EventSeries, 'The series this event belongs to, if any.')),
  reportingController: p(4, t.string('Name of the controller that emitted the event; required for new events.')),
  reportingInstance: p(5, t.string('ID of the controller instance; required for new events, at most 128 characters.')),
  action: p(6, t.string('What was done (or failed) regarding the object; required for new events, at most 128 characters.')),
  reason: p(7, t.string('Why it was done; required for new events, at most 128 characters.')),
  regarding: p(8, t.ref(ObjectReference, 'The object this event is about.'), 'always'),
  related: p(9, t.ref(ObjectReference, 'A second object involved, if any.')),
  note: p(10, t.string('Human-readable description, at most 1 kB.')),
  type: p(11, t.string('Normal or Warning; required for new events.')),
  deprecatedSource: p(12, t.ref(EventSource, 'Core v1 Event\'s source, kept for compatibility.'), 'always'),
  deprecatedFirstTimestamp: p(13, t.ref(Time, 'Core v1 Event\'s firstTimestamp, kept for compatibility.'), 'always'),
  deprecatedLastTimestamp: p(14, t.ref(Time, 'Core v1 Event\'s lastTimestamp, kept for compatibility.'), 'always'),
  deprecatedCount: p(15, t.int32('Core v1 Event\'s count, kept for compatibility.'), 'always'),
}));

/** This group's field -> core v1 Event's field, for the fields that differ in name. */
const coreNames: Record<string, string> = {
  regarding: 'involvedObject', note: 'message', reportingController: 'reportingComponent',
  deprecatedSource: 'source', deprecatedFirstTimestamp: 'firstTimestamp', deprecatedLastTimestamp: 'lastTimestamp', deprecatedCount: 'count',
};
const eventsNames: Record<string, string> = Object.fromEntries(Object.entries(coreNames).map(([ours, theirs]) => [theirs, ours]));

export const toCoreEvent = (e: KubeObject): KubeObject => renameKeys(e, coreNames);
export const fromCoreEvent = (e: KubeObject): KubeObject => renameKeys(e, eventsNames);

/** Upstream's limits on a new event's fields. */
const limits = { reportingInstance: 128, action: 128, reason: 128, note: 1024 };

/** What a write through this group must say, as upstream requires of events.k8s.io/v1. */
function validateEventsV1(e: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  if (!e.eventTime) errs.push(fieldErrors.required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(fieldErrors.invalid('type', '', `has invalid value: ${e.type ?? ''}`));
  if (!e.reportingController) errs.push(fieldErrors.required('reportingController'));
  else errs.push(...checkName(isQualifiedName, 'reportingController', e.reportingController));
  for (const field of ['reportingInstance', 'action', 'reason'] as const) {
    const value = String(e[field] ?? '');
    if (!value) errs.push(fieldErrors.required(field));
    else if (value.length > limits[field]) errs.push(fieldErrors.invalid(field, '', `can have at most ${limits[field]} characters`));
  }
  if (String(e.note ?? '').length > limits.note) errs.push(fieldErrors.invalid('note', '', `can have at most ${limits.note} characters`));
  if (e.series) {
    if (!(Number(e.series.count) >= 2)) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
    if (!e.series.lastObservedTime) errs.push(fieldErrors.required('series.lastObservedTime'));
  }
  if (e.deprecatedFirstTimestamp) errs.push(fieldErrors.invalid('deprecatedFirstTimestamp', '', 'needs to be unset'));
  if (e.deprecatedLastTimestamp) errs.push(fieldErrors.invalid('deprecatedLastTimestamp', '', 'needs to be unset'));
  if (e.deprecatedCount) errs.push(fieldErrors.invalid('deprecatedCount', '', 'needs to be unset'));
  if (e.deprecatedSource?.component || e.deprecatedSource?.host) errs.push(fieldErrors.invalid('deprecatedSource', '', 'needs to be unset'));
  return errs;
}

/** The events group's version of core Event, its columns those of core Event read through the conversion. */
export function eventsV1Version(coreColumns: PrinterColumn[]): VersionDeclaration {
  return {
    group: vocabulary.eventsGroup,
    name: 'v1',
    schema,
    printerColumns: coreColumns.map((c) => ({ ...c, value: (e: KubeObject) => c.value(toCoreEvent(e)) })),
    // Upstream registers no field label conversion for this group's Event: only metadata.name and metadata.namespace.
    fieldSelectors: {},
    toStored: toCoreEvent,
    fromStored: fromCoreEvent,
    validate: validateEventsV1,
  };
}
