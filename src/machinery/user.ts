/** Who made a request, as authenticators establish it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const systemGroups = {
  masters: 'system:masters',
  authenticated: 'system:authenticated',
  unauthenticated: 'system:unauthenticated',
} as const;

export const anonymousUser: UserInfo = { username: 'system:anonymous', groups: [systemGroups.unauthenticated] };

/**
 * Marks a user object that authenticators hand to every request of one
 * connection or cached token: the object and its extra map are frozen, so a
 * change throws instead of reaching other requests. Its groups list is left
 * as it is (kept unchanged by convention): V8 takes slower paths through
 * frozen arrays, and the authorizer walks the groups on every request.
 */
export function sharedUser<T extends UserInfo>(user: T): T {
  if (user.extra) {
    for (const values of Object.values(user.extra)) Object.freeze(values);
    Object.freeze(user.extra);
  }
  return Object.freeze(user);
}
