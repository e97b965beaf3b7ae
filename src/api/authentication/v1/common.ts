// Types shared by the kinds of authentication/v1.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';

export const authn = (name: string) => `${definitionPrefix}.api.authentication.v1.${name}`;

export const UserInfo = define(authn('UserInfo'), t.object({
  username: p(1, t.string('Name that uniquely identifies this user among all active users.')),
  uid: p(2, t.string('Identifies this user across time: a user deleted and added again gets another uid.')),
  groups: p(3, t.array(t.string(), 'Groups the user is in.', { listType: 'atomic' })),
  extra: p(4, t.map({ ...t.array(t.string()), protoMessage: 'stringList' }, 'Further information the authenticator provides.')),
}, 'Information about a user, as an authenticator establishes it.'));
