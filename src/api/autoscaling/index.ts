// The autoscaling group: HorizontalPodAutoscaler, stored as v2 and served as
// v1 too. (Scale, in v1/scale.ts, is only a view of other kinds.)
import type { KindDefinition } from '../kind.js';
import { horizontalPodAutoscalers } from './v2/horizontalpodautoscaler.js';

export const autoscalingKinds: KindDefinition[] = [horizontalPodAutoscalers];
export { horizontalPodAutoscalers };
