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
