// Credentials the server presents to webhooks: the kubeconfig file named by
// the plugin's WebhookAdmissionConfiguration (`kubeConfigFile`, an absolute
// path). Its users are keyed by the webhook's host: `host:port` of a URL, or
// `<service>.<namespace>.svc:<port>`; a `*.` prefix matches a domain, `*`
// any host, and the current context's user comes last, as upstream.

import { dirname, isAbsolute, resolve } from 'node:path';
import { vocabulary } from '../../machinery/vocabulary.js';
import { ownValue } from '../../machinery/ownkeys.js';
import { userCredentials, type UserCredentials } from '../../client/kubeconfig.js';
import { expectKind, parseConfigText, readText } from '../config.js';
import { AdmissionConfigError } from '../plugin-names.js';

export interface WebhookCredentials extends UserCredentials {
  username?: string;
  password?: string;
}

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A kubeconfig user's credentials; files are read now, relative to the kubeconfig's folder. */
async function credentialsOf(user: Doc, base: string, what: string): Promise<WebhookCredentials> {
  if (ownValue(user, 'auth-provider') !== undefined) throw new AdmissionConfigError(`${what}: auth provider not supported`);
  const c: WebhookCredentials = await userCredentials(user, (key, path) => readText(resolve(base, path), `${key} of ${what}`));
  const username = ownValue(user, 'username');
  const password = ownValue(user, 'password');
  if ((typeof username === 'string' && username) || (typeof password === 'string' && password)) {
    c.username = typeof username === 'string' ? username : '';
    c.password = typeof password === 'string' ? password : '';
  }
  return c;
}

export class CredentialResolver {
  constructor(private readonly users: ReadonlyMap<string, WebhookCredentials> = new Map(), private readonly currentUser?: WebhookCredentials) {}

  /** Reads the plugin's configuration; none means no credentials. */
  static async load(config: Doc | undefined, plugin: string): Promise<CredentialResolver> {
    if (!config) return new CredentialResolver();
    const what = `the configuration of ${plugin}`;
    expectKind(config, [
      { apiVersion: `${vocabulary.apiserverConfigGroup}/v1`, kind: 'WebhookAdmissionConfiguration' },
      { apiVersion: `${vocabulary.apiserverConfigGroup}/v1alpha1`, kind: 'WebhookAdmission' },
    ], what);
    const path = ownValue(config, 'kubeConfigFile');
    if (path === undefined || path === '') return new CredentialResolver();
    if (typeof path !== 'string' || !isAbsolute(path)) {
      throw new AdmissionConfigError(`${what}: kubeConfigFile: Invalid value: ${JSON.stringify(path)}: must be an absolute file path`);
    }
    const kubeconfig = parseConfigText(await readText(path, `the kubeconfig of ${plugin}`), `kubeconfig "${path}"`);
    if (!isDoc(kubeconfig)) throw new AdmissionConfigError(`kubeconfig "${path}" must hold an object`);
    const users = new Map<string, WebhookCredentials>();
    const list = ownValue(kubeconfig, 'users') ?? [];
    if (!Array.isArray(list)) throw new AdmissionConfigError(`kubeconfig "${path}": users must be a list`);
    for (const entry of list) {
      if (!isDoc(entry) || typeof entry.name !== 'string') throw new AdmissionConfigError(`kubeconfig "${path}": every user needs a name`);
      const user = ownValue(entry, 'user') ?? {};
      if (!isDoc(user)) throw new AdmissionConfigError(`kubeconfig "${path}": user ${entry.name} must be an object`);
      users.set(entry.name, await credentialsOf(user, dirname(path), `user ${entry.name} in kubeconfig "${path}"`));
    }
    let current: WebhookCredentials | undefined;
    const contextName = ownValue(kubeconfig, 'current-context');
    const contexts = ownValue(kubeconfig, 'contexts');
    if (typeof contextName === 'string' && Array.isArray(contexts)) {
      const context = contexts.find((c) => isDoc(c) && c.name === contextName) as Doc | undefined;
      const userName = isDoc(context?.context) ? ownValue(context.context as Doc, 'user') : undefined;
      if (typeof userName === 'string') current = users.get(userName);
    }
    return new CredentialResolver(users, current);
  }

  /** Credentials for `host:port` (the port may be absent for URLs without one). */
  for(target: string): WebhookCredentials | undefined {
    const found = this.lookup(target);
    if (found) return found;
    const withoutPort = /^(.*):443$/.exec(target)?.[1];
    return (withoutPort !== undefined ? this.lookup(withoutPort) : undefined) ?? this.users.get('*') ?? this.currentUser;
  }

  /** Exact name, then `*.` + each shorter domain suffix. */
  private lookup(target: string): WebhookCredentials | undefined {
    const exact = this.users.get(target);
    if (exact) return exact;
    const steps = target.split('.');
    for (let i = 1; i < steps.length; i++) {
      const wildcard = this.users.get(`*.${steps.slice(i).join('.')}`);
      if (wildcard) return wildcard;
    }
    return undefined;
  }
}
