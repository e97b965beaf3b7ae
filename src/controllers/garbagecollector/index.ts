// The garbage collector controller (owner references, orphan and foreground deletion).
export { GarbageCollector, collectableTypes } from './garbagecollector.js';
export { DependencyGraph, GraphNode } from './graph.js';
export type { GraphEvents } from './graph.js';
export type { ObjectIdentity, OwnerReference } from './references.js';
