// The apiextensions group, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { customResourceDefinitions } from './customresourcedefinition.js';

export const apiextensionsV1Kinds: KindDefinition[] = [customResourceDefinitions];
export { customResourceDefinitions };
