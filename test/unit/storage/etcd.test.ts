import { EtcdBackend } from '../../../src/storage/etcd.js';
import { startEtcd, EtcdCluster } from '../../support/etcd.js';
import { runConformance } from './conformance.js';

// A fresh etcd for each test: etcd's revision is global, and the suite expects an empty store.
let cluster: EtcdCluster | undefined;
runConformance('etcd', {
  async open() {
    cluster = await startEtcd(1);
    return new EtcdBackend({ endpoints: cluster.endpoints.split(','), requestTimeoutMs: 5000 });
  },
  async cleanup() {
    await cluster?.stop();
    cluster = undefined;
  },
});
