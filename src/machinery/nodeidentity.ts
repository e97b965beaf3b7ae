// Who is a node agent: a user named `system:node:<name>` in the group
// `system:nodes`, as upstream's default node identifier decides. The Node
// authorizer and the NodeRestriction admission plugin both ask it, so they
// cannot disagree about who is restricted.

import type { UserInfo } from './user.js';

export const nodesGroup = 'system:nodes';
export const nodeUserPrefix = 'system:node:';

/**
 * The node a user acts as: undefined when the user is not a node agent, ''
 * when it is one but names no node (upstream refuses such a user everything
 * a node may do).
 */
export function nodeIdentity(user: UserInfo | undefined): string | undefined {
  if (!user || !user.username.startsWith(nodeUserPrefix)) return undefined;
  if (!user.groups.includes(nodesGroup)) return undefined;
  return user.username.slice(nodeUserPrefix.length);
}
