// MutatingWebhookConfiguration: webhooks called one after another in the
// mutating phase, each able to change the object with a JSON patch.

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { kindSchema } from '../../core/v1/common.js';
import { configurationColumns, configurationValidation, defaultWebhooks, definition, group, webhookSchema, webhooksField } from './webhooks.js';

const MutatingWebhook = webhookSchema('MutatingWebhook', 'A webhook called in the mutating phase; it may answer with a JSON patch of the object.', {
  reinvocationPolicy: p(10, t.string('Never (default) or IfNeeded: call once more when a later webhook changed the object after this one.')),
}, { objectSelector: 11, matchConditions: 12 });

const schema = kindSchema('Webhooks that may change objects before they are validated and stored.', {
  webhooks: webhooksField(MutatingWebhook, 'The webhooks, called in this order (configurations in name order).'),
});

export const mutatingWebhookConfigurations = defineKind({
  group, version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations',
  categories: ['api-extensions'],
  scope: 'Cluster',
  schema: define(definition('MutatingWebhookConfiguration'), schema),
  tracksGeneration: true,
  strategy: { defaults: (c) => defaultWebhooks(c, true), ...configurationValidation(true) },
  printerColumns: configurationColumns,
});
