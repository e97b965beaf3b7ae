// Who the server takes a client for: a SelfSubjectReview (user name, uid,
// groups, extra), or the Status when the server refuses the credentials.

import assert from 'node:assert/strict';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import type { TestClient, Response } from './client.js';

export const selfReviewPath = `/apis/${vocabulary.authenticationGroup}/v1/selfsubjectreviews`;
const selfReviewBody = { apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'SelfSubjectReview' };

export interface SeenUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The raw answer to a self review sent with `headers`. */
export function selfReview(client: TestClient, headers?: Record<string, string>): Promise<Response> {
  return client.post(selfReviewPath, selfReviewBody, headers);
}

/** The user a self review names; fails the test unless the review was answered. */
export async function whoIs(client: TestClient, headers?: Record<string, string>): Promise<SeenUser> {
  const r = await selfReview(client, headers);
  assert.equal(r.status, 201, r.text);
  return r.json.status.userInfo;
}

/** A bearer token's Authorization header. */
export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });
