// The names of --authorization-mode and the rules for combining them with
// their files, with upstream's messages.

export const authorizationModeNames = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Node', 'RBAC', 'Webhook'] as const;
export type AuthorizationMode = (typeof authorizationModeNames)[number];

/** Why one entry of --authorization-mode is not a mode; undefined for a good one. */
export function badAuthorizationMode(mode: string): string | undefined {
  if ((authorizationModeNames as readonly string[]).includes(mode)) return undefined;
  return `authorization-mode ${JSON.stringify(mode)} is not a valid mode (valid: ${authorizationModeNames.join(', ')})`;
}

export interface AuthorizationFlags {
  modes: readonly string[];
  policyFile?: string;
  webhookConfigFile?: string;
}

/** The first problem of a set of authorization options, or undefined. */
export function authorizationOptionsProblem(o: AuthorizationFlags): string | undefined {
  if (o.modes.length === 0) return 'at least one authorization-mode must be passed';
  for (const mode of o.modes) {
    const bad = badAuthorizationMode(mode);
    if (bad) return bad;
  }
  if (new Set(o.modes).size !== o.modes.length) return `authorization-mode ${JSON.stringify(o.modes.join(','))} has mode specified more than once`;
  const has = (m: AuthorizationMode) => o.modes.includes(m);
  if (has('ABAC') && !o.policyFile) return 'authorization-mode ABAC\'s authorization policy file not passed';
  if (!has('ABAC') && o.policyFile) return 'cannot specify --authorization-policy-file without mode ABAC';
  if (has('Webhook') && !o.webhookConfigFile) return 'authorization-mode Webhook\'s authorization config file not passed';
  if (!has('Webhook') && o.webhookConfigFile) return 'cannot specify --authorization-webhook-config-file without mode Webhook';
  return undefined;
}
