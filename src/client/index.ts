// The package's client entry (`plat-apiserver/client`): talk to this server,
// or any upstream-compatible one, from TypeScript without another library.

export { RemoteClient, ResourceClient, StatusError, WatchStream, parseWarning, parseWarnings, collectionPath, objectPath } from './remote.js';
export type { RemoteClientOptions, RequestOptions, RawResponse, WriteOptions, PatchOptions, ListPageOptions, ListPage, WatchOptions, WatchEvent } from './remote.js';
export { loadKubeconfig, mergeKubeconfigs, resolveContext, inClusterConfig, KubeconfigError, serviceAccountDirs } from './kubeconfig.js';
export type { ClientConfig, ContextOverrides, ExecConfig, KubeconfigEntry, LoadKubeconfigOptions, MergedKubeconfig } from './kubeconfig.js';
export { ExecCredentialProvider, ExecPluginError, execCommandPath, validateExecConfig } from './exec.js';
export type { ExecCredentials, ExecProviderOptions } from './exec.js';
export { proxyTunnel } from './transport.js';
export { Informer, InformerFactory, objectKey, namespaceIndex } from './informer.js';
export type { InformerHandlers, IndexFunc, InformerScope } from './informer.js';
export { resources } from './resources.js';
export type { ResourceHandle } from './resources.js';
export { ApiCallError, isConflict, isNotFound, apiVersionOfType } from './types.js';
export type { ApiClient, ApiObject, DeleteOptions, EventType, ListOptions, ListResult, PatchType, ResourceType, WatchHandlers } from './types.js';
export { ClusterInfoSignatureError, verifiedClusterInfo, verifyClusterInfoSignature } from './clusterinfo.js';
export { discoverCluster, bootstrapNodeAgent } from './bootstrap.js';
export type { TrustedCluster, NodeAgentCredentials, NodeAgentBootstrapOptions } from './bootstrap.js';
export { kinds } from './kinds.js';
export type * from './kinds.js';
