// The batch group, version v1: every kind it stores.
import type { KindDefinition } from '../../kind.js';
import { jobs } from './job.js';
import { cronJobs } from './cronjob.js';

export const batchV1Kinds: KindDefinition[] = [jobs, cronJobs];
export { jobs, cronJobs };
