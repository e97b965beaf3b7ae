// The authorizer interface and their union: asked in order, the first that
// allows or denies decides; when all have no opinion the request is denied.

import type { UserInfo } from '../../machinery/user.js';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export type Decision = { decision: 'allow' | 'deny' | 'no-opinion'; reason: string };

export interface Authorizer {
  readonly name: string;
  authorize(attrs: Attributes): Promise<Decision> | Decision;
}

export class UnionAuthorizer implements Authorizer {
  readonly name = 'union';
  constructor(private readonly authorizers: Authorizer[]) {}

  async authorize(attrs: Attributes): Promise<Decision> {
    const reasons: string[] = [];
    for (const a of this.authorizers) {
      const d = await a.authorize(attrs);
      if (d.decision !== 'no-opinion') return d;
      if (d.reason) reasons.push(d.reason);
    }
    return { decision: 'no-opinion', reason: reasons.join('\n') };
  }
}

/** The AlwaysAllow mode: every authenticated request may do everything. */
export class AlwaysAllowAuthorizer implements Authorizer {
  readonly name = 'AlwaysAllow';
  authorize(): Decision {
    return { decision: 'allow', reason: '' };
  }
}
