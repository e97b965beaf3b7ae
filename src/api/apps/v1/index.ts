// The apps group, version v1: every kind it stores. No controller reconciles
// them here: a Deployment makes no ReplicaSet and a ReplicaSet no pods.
import type { KindDefinition } from '../../kind.js';
import { deployments, replicaSets } from './deployment.js';
import { statefulSets } from './statefulset.js';
import { controllerRevisions, daemonSets } from './daemonset.js';

export const appsV1Kinds: KindDefinition[] = [deployments, replicaSets, statefulSets, daemonSets, controllerRevisions];
export { deployments, replicaSets, statefulSets, daemonSets, controllerRevisions };
