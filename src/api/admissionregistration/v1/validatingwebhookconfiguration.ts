// ValidatingWebhookConfiguration: webhooks called in parallel in the
// validating phase; any of them may reject the request.

import { define } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { kindSchema } from '../../core/v1/common.js';
import { configurationColumns, configurationValidation, defaultWebhooks, definition, group, webhookSchema, webhooksField } from './webhooks.js';

const ValidatingWebhook = webhookSchema('ValidatingWebhook', 'A webhook called in the validating phase; it allows or rejects, and changes nothing.', {}, { objectSelector: 10, matchConditions: 11 });

const schema = kindSchema('Webhooks that may reject objects once they are final, before they are stored.', {
  webhooks: webhooksField(ValidatingWebhook, 'The webhooks, called in parallel.'),
});

export const validatingWebhookConfigurations = defineKind({
  group, version: 'v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations',
  categories: ['api-extensions'],
  scope: 'Cluster',
  schema: define(definition('ValidatingWebhookConfiguration'), schema),
  tracksGeneration: true,
  strategy: { defaults: (c) => defaultWebhooks(c, false), ...configurationValidation(false) },
  printerColumns: configurationColumns,
});
