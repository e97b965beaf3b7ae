// The admissionregistration group, version v1: every kind it serves.
import type { KindDefinition } from '../../kind.js';
import { mutatingWebhookConfigurations } from './mutatingwebhookconfiguration.js';
import { validatingWebhookConfigurations } from './validatingwebhookconfiguration.js';
import { validatingAdmissionPolicies, validatingAdmissionPolicyBindings } from './validatingadmissionpolicy.js';

export const admissionRegistrationV1Kinds: KindDefinition[] = [
  mutatingWebhookConfigurations, validatingWebhookConfigurations, validatingAdmissionPolicies, validatingAdmissionPolicyBindings,
];
export { mutatingWebhookConfigurations, validatingWebhookConfigurations, validatingAdmissionPolicies, validatingAdmissionPolicyBindings };
