// --admission-control-config-file: an AdmissionConfiguration (YAML or JSON)
// with one entry per plugin, each holding its configuration inline
// (`configuration`) or in a file of its own (`path`, relative to the
// configuration file's folder). Read once at start-up; every problem stops
// the start with a message naming the file and the entry.

import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import YAML from 'yaml';
import { vocabulary } from '../machinery/vocabulary.js';
import { hasOwn, ownValue } from '../machinery/ownkeys.js';
import { jsonTextExceedsDepth } from '../machinery/limits.js';
import { AdmissionConfigError } from './plugin-names.js';

/** The configuration of each plugin that has one, by plugin name. */
export type PluginConfigs = ReadonlyMap<string, Record<string, unknown>>;

const acceptedVersions = [`${vocabulary.apiserverConfigGroup}/v1`, `${vocabulary.apiserverConfigGroup}/v1alpha1`];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses YAML or JSON text (JSON is YAML); a repeated key or a nesting past the limit is an error. */
export function parseConfigText(text: string, what: string): unknown {
  if (jsonTextExceedsDepth(text)) throw new AdmissionConfigError(`${what} is nested too deeply`);
  try {
    return YAML.parse(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new AdmissionConfigError(`${what} is not valid YAML or JSON: ${(e as Error).message}`);
  }
}

/** A file's text; a file that cannot be read is a configuration error naming it. */
export async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new AdmissionConfigError(`unable to read ${what} from "${path}": ${(e as Error).message}`);
  }
}

/** Checks apiVersion and kind of a configuration document. */
export function expectKind(doc: unknown, kinds: readonly { apiVersion: string; kind: string }[], what: string): Record<string, unknown> {
  if (!isObject(doc)) throw new AdmissionConfigError(`${what} must be an object`);
  const apiVersion = ownValue(doc, 'apiVersion');
  const kind = ownValue(doc, 'kind');
  if (!kinds.some((k) => k.apiVersion === apiVersion && k.kind === kind)) {
    const wanted = kinds.map((k) => `${k.kind} (apiVersion ${k.apiVersion})`).join(' or ');
    throw new AdmissionConfigError(`${what} must be a ${wanted}, not ${String(kind ?? 'an object without kind')} (apiVersion ${String(apiVersion ?? 'unset')})`);
  }
  return doc;
}

/** Where each plugin configuration was read, for the messages that refuse it. */
const sources = new WeakMap<object, string>();

/** `configuration file "<path>" of plugin <name>`, or the entry of the admission configuration file that held it inline. */
export function configSource(config: object, plugin: string): string {
  return sources.get(config) ?? `the configuration of plugin ${plugin}`;
}

/** Reads the file; no file means no plugin has a configuration. */
export async function readAdmissionConfiguration(path: string | undefined): Promise<PluginConfigs> {
  const configs = new Map<string, Record<string, unknown>>();
  if (!path) return configs;
  const seen = new Set<string>();
  const what = `admission control configuration file "${path}"`;
  const doc = expectKind(parseConfigText(await readText(path, 'the admission control configuration'), what),
    acceptedVersions.map((apiVersion) => ({ apiVersion, kind: 'AdmissionConfiguration' })), what);
  const plugins = ownValue(doc, 'plugins') ?? [];
  if (!Array.isArray(plugins)) throw new AdmissionConfigError(`${what}: plugins must be a list`);
  for (const [i, entry] of plugins.entries()) {
    const at = `${what}: plugins[${i}]`;
    if (!isObject(entry)) throw new AdmissionConfigError(`${at} must be an object`);
    const name = ownValue(entry, 'name');
    if (typeof name !== 'string' || name === '') throw new AdmissionConfigError(`${at}.name is required`);
    if (seen.has(name)) throw new AdmissionConfigError(`${at}: plugin "${name}" is configured more than once`);
    seen.add(name);
    const hasPath = hasOwn(entry, 'path') && entry.path !== null && entry.path !== '';
    const hasInline = hasOwn(entry, 'configuration') && entry.configuration !== null;
    if (hasPath && hasInline) throw new AdmissionConfigError(`${at} (${name}): give either path or configuration, not both`);
    if (hasPath) {
      if (typeof entry.path !== 'string') throw new AdmissionConfigError(`${at}.path must be a string`);
      const file = resolve(dirname(path), entry.path);
      const config = parseConfigText(await readText(file, `the configuration of plugin ${name}`), `configuration file "${file}" of plugin ${name}`);
      if (!isObject(config)) throw new AdmissionConfigError(`configuration file "${file}" of plugin ${name} must hold an object`);
      configs.set(name, config);
      sources.set(config, `configuration file "${file}" of plugin ${name}`);
    } else if (hasInline) {
      if (!isObject(entry.configuration)) throw new AdmissionConfigError(`${at}.configuration must be an object`);
      configs.set(name, entry.configuration);
      sources.set(entry.configuration, `${at}.configuration (${name})`);
    }
  }
  return configs;
}
