// The proxy sub-resource of nodes: it would reach the node agent, which this
// server never dials; it answers as upstream does when the agent cannot be
// reached (after looking the node up: a missing node is not found).

import { errors } from '../machinery/errors.js';
import { goQuote } from '../machinery/goquote.js';
import { splitSchemeNamePort } from '../machinery/schemenameport.js';
import type { Registry } from './registry.js';
import type { RestObject } from './rest.js';
import { nodes } from '../api/core/v1/node.js';
import { nodeProxyOptions } from '../api/core/v1/connectoptions.js';
import { unreachableAgent } from './pods.js';

export function nodeRests(registry: Registry): RestObject[] {
  const store = registry.store('', 'v1', 'nodes');
  if (!store) return [];
  return [{
    describe: { group: '', version: 'v1', resource: 'nodes', subresource: 'proxy', namespaced: false, kind: nodes, parentKind: nodes, deleteAnswersObject: false, stored: false },
    connector: {
      verbs: ['create', 'delete', 'get', 'patch', 'update'],
      admitted: nodeProxyOptions,
      // The name segment is `[scheme:]name[:port]`; request info and authorization keep it whole, as upstream.
      connect: async (path) => {
        const target = splitSchemeNamePort(path.name!);
        if (!target) throw errors.badRequest(`invalid node request ${goQuote(path.name!)}`);
        await store.get(undefined, target.name);
        return unreachableAgent(registry, target.name, target.port ? `proxy to port ${target.port} of node ${target.name}` : `proxy to node ${target.name}`, target.port);
      },
    },
  }];
}
