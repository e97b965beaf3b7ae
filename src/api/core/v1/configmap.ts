import { define, p, t } from '../../schema.js';
import { defineKind, KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, isConfigMapKey, keyPath } from '../../../machinery/validation.js';
import { deepEqual } from '../../../machinery/equal.js';
import { hasOwn } from '../../../machinery/ownkeys.js';
import { core, kindSchema, nameColumn, ageColumn, maxDataSize } from './common.js';
import { immutableDataMessage } from './secret.js';

const schema = kindSchema('Holds configuration data for programs to read.', {
  data: p(2, t.map(t.string(), 'UTF-8 values by key; keys are alphanumeric, -, _ or . and may not also appear in binaryData.')),
  binaryData: p(3, t.map(t.bytes(), 'Binary values by key, base64 in JSON and YAML; keys may not also appear in data.')),
  immutable: p(4, t.bool('When true, data and binaryData cannot be changed any more; only metadata can.')),
});

function validateConfigMap(c: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const data: Record<string, string> = c.data ?? {};
  const binary: Record<string, string> = c.binaryData ?? {};
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    errs.push(...checkName(isConfigMapKey, keyPath('data', key), key));
    if (hasOwn(binary, key)) errs.push(fieldErrors.invalid(keyPath('data', key), key, 'duplicate of key present in binaryData'));
    size += key.length + Buffer.byteLength(String(value), 'utf8');
  }
  for (const [key, value] of Object.entries(binary)) {
    errs.push(...checkName(isConfigMapKey, keyPath('binaryData', key), key));
    size += key.length + Buffer.byteLength(String(value), 'base64');
  }
  if (size > maxDataSize) errs.push(fieldErrors.tooLong('', maxDataSize));
  return errs;
}

export const configMaps = defineKind({
  group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', shortNames: ['cm'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('ConfigMap'), schema),
  strategy: {
    validate: validateConfigMap,
    validateUpdate(c, old) {
      const errs = validateConfigMap(c);
      if (old.immutable === true) {
        if (c.immutable !== true) errs.push(fieldErrors.forbidden('immutable', immutableDataMessage));
        if (!deepEqual(c.data ?? {}, old.data ?? {})) errs.push(fieldErrors.forbidden('data', immutableDataMessage));
        if (!deepEqual(c.binaryData ?? {}, old.binaryData ?? {})) errs.push(fieldErrors.forbidden('binaryData', immutableDataMessage));
      }
      return errs;
    },
  },
  printerColumns: [
    nameColumn,
    { name: 'Data', type: 'string', description: 'Number of keys in data and binaryData.', value: (c) => Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length },
    ageColumn,
  ],
});
