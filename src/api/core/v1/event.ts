import { define, p, t } from '../../schema.js';
import { defineKind, KubeObject, type PrinterColumn } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { Time, MicroTime } from '../../meta/v1.js';
import { ageOf } from '../../../machinery/time.js';
import { core, EventSource, kindSchema, ObjectReference } from './common.js';
import { eventsV1Version } from '../../events/v1/event.js';

const EventSeries = define(core('EventSeries'), t.object({
  count: p(1, t.int32('Occurrences in this series up to lastObservedTime.'), 'always'),
  lastObservedTime: p(2, t.ref(MicroTime, 'When the last occurrence was seen.'), 'always'),
}, 'A series of repeated events.'));

const schema = kindSchema('A report of something that happened somewhere in the cluster.', {
  involvedObject: p(2, t.ref(ObjectReference, 'The object this event is about.'), 'always'),
  reason: p(3, t.string('Short, machine-understandable reason for the transition into the object\'s current status.')),
  message: p(4, t.string('Human-readable description of the status of this operation.')),
  source: p(5, t.ref(EventSource, 'Component reporting this event.'), 'always'),
  firstTimestamp: p(6, t.ref(Time, 'When the event was first recorded.'), 'always'),
  lastTimestamp: p(7, t.ref(Time, 'When the most recent occurrence was recorded.'), 'always'),
  count: p(8, t.int32('How many times the event has occurred.'), 'always'),
  type: p(9, t.string('Type of the event: Normal or Warning; new types may come.')),
  eventTime: p(10, t.ref(MicroTime, 'When the event was first observed.'), 'always'),
  series: p(11, t.ref(EventSeries, 'Data about the series this event belongs to, if any.')),
  action: p(12, t.string('What action was taken or failed regarding the object.')),
  related: p(13, t.ref(ObjectReference, 'A second object involved, if any.')),
  reportingComponent: p(14, t.string('Name of the controller that emitted the event.', { default: '' })),
  reportingInstance: p(15, t.string('ID of the controller instance.', { default: '' })),
}, ['metadata', 'involvedObject']);

function validateEvent(e: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const involvedNs = e.involvedObject?.namespace;
  if (involvedNs && involvedNs !== e.metadata?.namespace) {
    errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  }
  if (e.type !== undefined && e.type !== '' && e.eventTime && !['Normal', 'Warning'].includes(e.type)) {
    errs.push(fieldErrors.notSupported('type', e.type, ['Normal', 'Warning']));
  }
  return errs;
}

const ref = (field: string) => (e: KubeObject) => String(e.involvedObject?.[field] ?? '');

/** First and last seen, as upstream prints them: eventTime stands in for a missing firstTimestamp, a series' last observation wins. */
function eventTimes(e: KubeObject): { first: string; last: string } {
  const first = e.firstTimestamp ? ageOf(e.firstTimestamp) : ageOf(e.eventTime);
  const last = e.series ? ageOf(e.series.lastObservedTime) : e.lastTimestamp ? ageOf(e.lastTimestamp) : first;
  return { first, last };
}

function eventTarget(e: KubeObject): string {
  const kind = String(e.involvedObject?.kind ?? '').toLowerCase();
  return e.involvedObject?.name ? `${kind}/${e.involvedObject.name}` : kind;
}

/** component (or reportingComponent), then ", host" (or reportingInstance) when there is one. */
function eventSource(e: KubeObject): string {
  const component = e.source?.component || e.reportingComponent || '';
  const instance = e.source?.host || e.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

const columns: PrinterColumn[] = [
  { name: 'Last Seen', type: 'string', description: 'Time since the last occurrence.', value: (e) => eventTimes(e).last },
  { name: 'Type', type: 'string', description: 'Type of the event.', value: (e) => e.type },
  { name: 'Reason', type: 'string', description: 'Reason of the event.', value: (e) => e.reason },
  { name: 'Object', type: 'string', description: 'The object the event is about.', value: eventTarget },
  { name: 'Subobject', type: 'string', priority: 1, description: 'The part of the object the event is about.', value: (e) => e.involvedObject?.fieldPath },
  { name: 'Source', type: 'string', priority: 1, description: 'Who reported the event.', value: eventSource },
  { name: 'Message', type: 'string', description: 'The message of the event.', value: (e) => String(e.message ?? '').trim() },
  { name: 'First Seen', type: 'string', priority: 1, description: 'Time since the first occurrence.', value: (e) => eventTimes(e).first },
  { name: 'Count', type: 'string', priority: 1, description: 'How often the event occurred.', value: (e) => (e.series ? e.series.count : e.count) || 1 },
  { name: 'Name', type: 'string', format: 'name', priority: 1, description: 'Name of the event object.', value: (e) => e.metadata?.name },
];

export const events = defineKind({
  group: '', version: 'v1', kind: 'Event', plural: 'events', shortNames: ['ev'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('Event'), schema),
  strategy: { validate: validateEvent, validateUpdate: (e) => validateEvent(e) },
  createOnUpdate: true,
  fieldSelectors: {
    'involvedObject.kind': ref('kind'),
    'involvedObject.namespace': ref('namespace'),
    'involvedObject.name': ref('name'),
    'involvedObject.uid': ref('uid'),
    'involvedObject.apiVersion': ref('apiVersion'),
    'involvedObject.resourceVersion': ref('resourceVersion'),
    'involvedObject.fieldPath': ref('fieldPath'),
    reason: (e) => e.reason ?? '',
    reportingComponent: (e) => e.reportingComponent ?? '',
    source: (e) => e.source?.component ?? '',
    type: (e) => e.type ?? '',
  },
  printerColumns: columns,
  otherVersions: [eventsV1Version(columns)],
});
