import { define, p, t } from '../../schema.js';
import { defineKind, KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, isConfigMapKey, keyPath } from '../../../machinery/validation.js';
import { deepEqual } from '../../../machinery/equal.js';
import { hasOwn, ownValue, setOwn } from '../../../machinery/ownkeys.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import { core, kindSchema, nameColumn, ageColumn, maxDataSize } from './common.js';

const schema = kindSchema('Holds secret data of a certain type, at most 1 MiB in total.', {
  data: p(2, t.map(t.bytes(), 'Secret values by key; keys are alphanumeric, -, _ or .; values are base64 in JSON and YAML.')),
  stringData: p(4, t.map(t.string(), 'Write-only convenience: plain-text values merged into data on write, winning over data for the same key.')),
  type: p(3, t.string('Helps programs handle the secret; Opaque when empty.')),
  immutable: p(5, t.bool('When true, data cannot be changed any more; only metadata can.')),
});

/** Keys that a secret of a given type must carry. */
const requiredKeys: Record<string, string[]> = {
  [vocabulary.dockercfgSecretType]: ['.dockercfg'],
  [vocabulary.dockerConfigJsonSecretType]: ['.dockerconfigjson'],
  [vocabulary.sshAuthSecretType]: ['ssh-privatekey'],
  [vocabulary.tlsSecretType]: ['tls.crt', 'tls.key'],
};

function dataSize(data: Record<string, string> | undefined): number {
  let n = 0;
  for (const v of Object.values(data ?? {})) n += Buffer.byteLength(v, 'base64');
  return n;
}

function validateSecret(s: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const data: Record<string, string> = s.data ?? {};
  for (const key of Object.keys(data)) errs.push(...checkName(isConfigMapKey, keyPath('data', key), key));
  if (dataSize(data) > maxDataSize) errs.push(fieldErrors.tooLong('data', maxDataSize));
  const type: string = s.type;
  for (const key of ownValue(requiredKeys, type) ?? []) {
    if (!hasOwn(data, key)) errs.push(fieldErrors.required(keyPath('data', key)));
  }
  if (type === vocabulary.serviceAccountTokenSecretType && !s.metadata?.annotations?.[vocabulary.serviceAccountNameAnnotation]) {
    errs.push(fieldErrors.required(keyPath('metadata.annotations', vocabulary.serviceAccountNameAnnotation)));
  }
  if (type === vocabulary.basicAuthSecretType && !hasOwn(data, 'username') && !hasOwn(data, 'password')) {
    errs.push(fieldErrors.required(keyPath('data', 'username'), 'either username or password is required'));
  }
  return errs;
}

/** stringData is write-only: fold it into data (base64) and drop it. */
function foldStringData(s: KubeObject): void {
  if (!s.stringData) return;
  s.data ??= {};
  for (const [k, v] of Object.entries(s.stringData as Record<string, string>)) setOwn(s.data, k, Buffer.from(String(v), 'utf8').toString('base64'));
  delete s.stringData;
}

export const immutableDataMessage = 'field is immutable when `immutable` is set';

export const secrets = defineKind({
  group: '', version: 'v1', kind: 'Secret', plural: 'secrets',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('Secret'), schema),
  strategy: {
    defaults(s) { s.type ||= 'Opaque'; },
    prepareForCreate: foldStringData,
    prepareForUpdate: foldStringData,
    validate: validateSecret,
    validateUpdate(s, old) {
      const errs = validateSecret(s);
      if (s.type !== old.type) errs.push(fieldErrors.invalid('type', s.type, 'field is immutable'));
      if (old.immutable === true) {
        if (s.immutable !== true) errs.push(fieldErrors.forbidden('immutable', immutableDataMessage));
        if (!deepEqual(s.data ?? {}, old.data ?? {})) errs.push(fieldErrors.forbidden('data', immutableDataMessage));
      }
      return errs;
    },
  },
  fieldSelectors: { type: (s) => s.type ?? '' },
  printerColumns: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'The type of the secret.', value: (s) => s.type },
    { name: 'Data', type: 'string', description: 'Number of keys in data.', value: (s) => Object.keys(s.data ?? {}).length },
    ageColumn,
  ],
});
