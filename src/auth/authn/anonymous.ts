// Whether requests without credentials are let in as system:anonymous (group
// system:unauthenticated). The spec: on by default unless the only way to
// authorize is AlwaysAllow (where anonymous would mean "anyone may do
// anything"); --anonymous-auth=true|false decides when given.

export const alwaysAllowMode = 'AlwaysAllow';

export function anonymousAuthEnabled(flag: boolean | undefined, authorizationModes: readonly string[]): boolean {
  if (flag !== undefined) return flag;
  return !authorizationModes.includes(alwaysAllowMode);
}
