// Who may do what: the authorizer union of --authorization-mode, in order,
// behind the privileged group (system:masters), as upstream builds it.

import type { ServerOptions } from './options.js';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupsAuthorizer, UnionAuthorizer, type Authorizer } from '../auth/authz/authorizer.js';
import { authorizationOptionsProblem, type AuthorizationMode } from '../auth/authz/modes.js';

/** A bad combination of authorization options given to startServer (the CLI finds it first). */
export class AuthorizationConfigError extends Error {
  override name = 'AuthorizationConfigError';
}

export interface AuthorizationParts {
  /** Asked by the filters and the access reviews. */
  authorizer: UnionAuthorizer;
  stop(): void;
}

/** What is read from the options' files before anything else starts, so a bad option or file stops the start early. */
export interface AuthorizationFiles {
  modes: AuthorizationMode[];
}

export async function readAuthorizationFiles(options: ServerOptions): Promise<AuthorizationFiles> {
  const problem = authorizationOptionsProblem({
    modes: options.authorizationMode, policyFile: options.authorizationPolicyFile, webhookConfigFile: options.authorizationWebhookConfigFile,
  });
  if (problem) throw new AuthorizationConfigError(problem);
  return { modes: options.authorizationMode as AuthorizationMode[] };
}

export function buildAuthorization(files: AuthorizationFiles): AuthorizationParts {
  const modules: Authorizer[] = [new PrivilegedGroupsAuthorizer()];
  for (const mode of files.modes) {
    switch (mode) {
      case 'AlwaysAllow': modules.push(new AlwaysAllowAuthorizer()); break;
      case 'AlwaysDeny': modules.push(new AlwaysDenyAuthorizer()); break;
      default: throw new AuthorizationConfigError(`authorization-mode ${mode} is not built yet`);
    }
  }
  return { authorizer: new UnionAuthorizer(modules), stop: () => undefined };
}
