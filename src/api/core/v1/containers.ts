// The container types of a pod spec (upstream 1.32's Container and what it
// holds: ports, environment, resources, probes, lifecycle hooks, security
// context, mounts), with upstream's protobuf field numbers, strategic-merge
// keys and list types. Shared by Pod, PodTemplate and every kind that embeds
// a pod template.

import { definitionPrefix } from '../../../machinery/vocabulary.js';
import { define, p, t, type Schema } from '../../schema.js';
import { core, LocalObjectReference } from './common.js';

/** A resource quantity (`500m`, `1Gi`): text in JSON (numbers are read too), canonical as upstream writes it. */
export const Quantity = define(`${definitionPrefix}.apimachinery.api.resource.Quantity`, {
  type: 'string', protoMessage: 'quantity',
  description: 'A fixed-point number with an optional SI (m, k, M, G...) or binary (Ki, Mi, Gi...) suffix or a decimal exponent (e3).',
});

/** Resource names to quantities (requests, limits, capacity). */
export const resourceList = (description: string): Schema => t.map(t.ref(Quantity), description);

const atomicStrings = (description: string): Schema => t.array(t.string(), description, { listType: 'atomic' });
/** A list merged by one key, as upstream's patchMergeKey with listType=map. */
export const mergedBy = (key: string, items: Schema, description: string, strategy = 'merge'): Schema =>
  t.array(items, description, { patchMergeKey: key, patchStrategy: strategy, listType: 'map', listMapKeys: [key] });

export const ContainerPort = define(core('ContainerPort'), t.object({
  name: p(1, t.string('An IANA_SVC_NAME, unique within the pod, that services can refer to.')),
  hostPort: p(2, t.int32('Port to expose on the host (1-65535); most containers do not need one.')),
  containerPort: p(3, t.int32('Port on the pod\'s IP address (1-65535).'), 'always'),
  protocol: p(4, t.string('UDP, TCP or SCTP; TCP when unset.', { enum: ['SCTP', 'TCP', 'UDP'], default: 'TCP' })),
  hostIP: p(5, t.string('Host IP to bind the host port to.')),
}, 'A network port of one container.', { required: ['containerPort'] }));

export const ObjectFieldSelector = define(core('ObjectFieldSelector'), t.object({
  apiVersion: p(1, t.string('Version of the schema fieldPath is written in; v1 when unset.')),
  fieldPath: p(2, t.string('Path of the field to select, in that version.')),
}, 'Selects a field of the pod.', { required: ['fieldPath'], mapType: 'atomic' }));

export const ResourceFieldSelector = define(core('ResourceFieldSelector'), t.object({
  containerName: p(1, t.string('Container name; required for volumes, optional for environment variables.')),
  resource: p(2, t.string('Resource to select: limits.cpu, requests.memory, ...')),
  divisor: p(3, t.ref(Quantity, 'Output format of the exposed resources; 1 when unset.')),
}, 'Selects a resource of a container (limits or requests).', { required: ['resource'], mapType: 'atomic' }));

/** A LocalObjectReference embedded in another selector: `name` in JSON, a nested message on the wire. */
const embedsReference = { protoInline: [{ proto: 1, schema: LocalObjectReference }] };
const referenceName = { name: t.string('Name of the referent in the pod\'s namespace.', { default: '' }) };

export const ConfigMapKeySelector = define(core('ConfigMapKeySelector'), t.object({
  ...referenceName,
  key: p(2, t.string('The key to select.')),
  optional: p(3, t.bool('Whether the ConfigMap or its key may be missing.')),
}, 'Selects a key of a ConfigMap.', { required: ['key'], mapType: 'atomic', ...embedsReference }));

export const SecretKeySelector = define(core('SecretKeySelector'), t.object({
  ...referenceName,
  key: p(2, t.string('The key of the secret to select; must be a valid secret key.')),
  optional: p(3, t.bool('Whether the Secret or its key may be missing.')),
}, 'Selects a key of a Secret.', { required: ['key'], mapType: 'atomic', ...embedsReference }));

export const EnvVarSource = define(core('EnvVarSource'), t.object({
  fieldRef: p(1, t.ref(ObjectFieldSelector, 'A field of the pod: metadata.name, metadata.namespace, metadata.labels[\'<KEY>\'], spec.nodeName, status.podIP, ...')),
  resourceFieldRef: p(2, t.ref(ResourceFieldSelector, 'A resource of the container: limits.cpu, requests.memory, ...')),
  configMapKeyRef: p(3, t.ref(ConfigMapKeySelector, 'A key of a ConfigMap in the pod\'s namespace.')),
  secretKeyRef: p(4, t.ref(SecretKeySelector, 'A key of a Secret in the pod\'s namespace.')),
}, 'Where an environment variable takes its value from.'));

export const EnvVar = define(core('EnvVar'), t.object({
  name: p(1, t.string('Name of the variable; any printable ASCII except \'=\'.')),
  value: p(2, t.string('Value; $(VAR_NAME) refers to earlier variables, $$ escapes.')),
  valueFrom: p(3, t.ref(EnvVarSource, 'Source of the value; cannot be used with value.')),
}, 'An environment variable of a container.', { required: ['name'] }));

const envSource = (what: string) => define(core(`${what}EnvSource`), t.object({
  ...referenceName,
  optional: p(2, t.bool(`Whether the ${what} may be missing.`)),
}, `Takes every key of a ${what} as environment variables.`, embedsReference));

export const EnvFromSource = define(core('EnvFromSource'), t.object({
  prefix: p(1, t.string('Prefix added to each name; must be a C identifier.')),
  configMapRef: p(2, t.ref(envSource('ConfigMap'), 'The ConfigMap to take variables from.')),
  secretRef: p(3, t.ref(envSource('Secret'), 'The Secret to take variables from.')),
}, 'A source of a set of environment variables.'));

export const ResourceClaim = define(core('ResourceClaim'), t.object({
  name: p(1, t.string('Name of an entry of the pod\'s spec.resourceClaims.')),
  request: p(2, t.string('The request of that claim to use, when only one is meant.')),
}, 'A resource claim one container uses.', { required: ['name'] }));

export const ResourceRequirements = define(core('ResourceRequirements'), t.object({
  limits: p(1, resourceList('Maximum amount of each compute resource allowed.')),
  requests: p(2, resourceList('Minimum amount of each compute resource required; limits when unset.')),
  claims: p(3, t.array(t.ref(ResourceClaim), 'Names of resource claims (spec.resourceClaims) the container uses.', { listType: 'map', listMapKeys: ['name'] })),
}, 'Compute resource requirements.'));

export const ContainerResizePolicy = define(core('ContainerResizePolicy'), t.object({
  resourceName: p(1, t.string('Name of the resource the policy applies to: cpu or memory.')),
  restartPolicy: p(2, t.string('NotRequired or RestartContainer.')),
}, 'How a container is resized for one resource.', { required: ['resourceName', 'restartPolicy'] }));

export const VolumeMount = define(core('VolumeMount'), t.object({
  name: p(1, t.string('Name of a volume of the pod.')),
  readOnly: p(2, t.bool('Mounted read-only when true.')),
  recursiveReadOnly: p(7, t.string('Disabled, IfPossible or Enabled: whether read-only mounts are read-only recursively.')),
  mountPath: p(3, t.string('Path in the container to mount the volume at; may not contain \':\'.')),
  subPath: p(4, t.string('Path within the volume to mount instead of its root.')),
  mountPropagation: p(5, t.string('None, HostToContainer or Bidirectional.')),
  subPathExpr: p(6, t.string('Like subPath, with $(VAR_NAME) expanded from the environment; excludes subPath.')),
}, 'Mounting of a volume within a container.', { required: ['name', 'mountPath'] }));

export const VolumeDevice = define(core('VolumeDevice'), t.object({
  name: p(1, t.string('Name of a persistentVolumeClaim volume of the pod.')),
  devicePath: p(2, t.string('Path in the container the device is mapped to.')),
}, 'A raw block device within a container.', { required: ['name', 'devicePath'] }));

const ExecAction = define(core('ExecAction'), t.object({
  command: p(1, atomicStrings('Command line to run in the container (not in a shell); exit status 0 is success.')),
}, 'Runs a command in the container.'));

const HTTPHeader = define(core('HTTPHeader'), t.object({
  name: p(1, t.string('Header field name.')),
  value: p(2, t.string('Header field value.')),
}, 'A header of an HTTP probe.', { required: ['name', 'value'] }));

const HTTPGetAction = define(core('HTTPGetAction'), t.object({
  path: p(1, t.string('Path to request.')),
  port: p(2, t.intOrString('Port number or IANA_SVC_NAME of the container to connect to.')),
  host: p(3, t.string('Host to connect to; the pod IP when unset.')),
  scheme: p(4, t.string('HTTP or HTTPS; HTTP when unset.', { enum: ['HTTP', 'HTTPS'] })),
  httpHeaders: p(5, t.array(t.ref(HTTPHeader), 'Custom headers; repeated headers are allowed.', { listType: 'atomic' })),
}, 'An HTTP GET request.', { required: ['port'] }));

const TCPSocketAction = define(core('TCPSocketAction'), t.object({
  port: p(1, t.intOrString('Port number or IANA_SVC_NAME of the container.')),
  host: p(2, t.string('Host to connect to; the pod IP when unset.')),
}, 'Opens a TCP connection.', { required: ['port'] }));

const GRPCAction = define(core('GRPCAction'), t.object({
  port: p(1, t.int32('Port number of the gRPC service (1-65535).'), 'always'),
  service: p(2, t.string('Service name for the gRPC health check; the default behaviour when unset.', { default: '' })),
}, 'A gRPC health check.', { required: ['port'] }));

const SleepAction = define(core('SleepAction'), t.object({
  seconds: p(1, t.int64('Seconds to sleep.'), 'always'),
}, 'Sleeps for a while.', { required: ['seconds'] }));

/** A ProbeHandler embedded in a Probe: its fields are the probe's in JSON, field 1 on the wire. */
const ProbeHandler = define(core('ProbeHandler'), t.object({
  exec: p(1, t.ref(ExecAction, 'Runs a command.')),
  httpGet: p(2, t.ref(HTTPGetAction, 'An HTTP GET request.')),
  tcpSocket: p(3, t.ref(TCPSocketAction, 'A TCP connection.')),
  grpc: p(4, t.ref(GRPCAction, 'A gRPC health check.')),
}, 'What a probe does: exactly one action.'));

export const Probe = define(core('Probe'), t.object({
  ...ProbeHandler.properties,
  initialDelaySeconds: p(2, t.int32('Seconds after the container starts before probes begin.')),
  timeoutSeconds: p(3, t.int32('Seconds after which the probe times out; 1 when unset.')),
  periodSeconds: p(4, t.int32('How often to probe, in seconds; 10 when unset.')),
  successThreshold: p(5, t.int32('Consecutive successes after a failure to count as success; 1 when unset.')),
  failureThreshold: p(6, t.int32('Consecutive failures to count as failure; 3 when unset.')),
  terminationGracePeriodSeconds: p(7, t.int64('Grace period when the probe fails, overriding the pod\'s.')),
}, 'A health check of a container.', { protoInline: [{ proto: 1, schema: ProbeHandler }] }));

export const LifecycleHandler = define(core('LifecycleHandler'), t.object({
  exec: p(1, t.ref(ExecAction, 'Runs a command.')),
  httpGet: p(2, t.ref(HTTPGetAction, 'An HTTP GET request.')),
  tcpSocket: p(3, t.ref(TCPSocketAction, 'Deprecated: kept for compatibility, never run.')),
  sleep: p(4, t.ref(SleepAction, 'Sleeps for a while.')),
}, 'What a lifecycle hook does: exactly one action.'));

const Lifecycle = define(core('Lifecycle'), t.object({
  postStart: p(1, t.ref(LifecycleHandler, 'Called right after the container is created.')),
  preStop: p(2, t.ref(LifecycleHandler, 'Called before the container is terminated.')),
}, 'Actions run on container lifecycle events.'));

const Capabilities = define(core('Capabilities'), t.object({
  add: p(1, atomicStrings('Capabilities to add.')),
  drop: p(2, atomicStrings('Capabilities to drop.')),
}, 'POSIX capabilities to add and drop.'));

export const SELinuxOptions = define(core('SELinuxOptions'), t.object({
  user: p(1, t.string('SELinux user label.')),
  role: p(2, t.string('SELinux role label.')),
  type: p(3, t.string('SELinux type label.')),
  level: p(4, t.string('SELinux level label.')),
}, 'SELinux labels to apply.'));

export const WindowsSecurityContextOptions = define(core('WindowsSecurityContextOptions'), t.object({
  gmsaCredentialSpecName: p(1, t.string('Name of the GMSA credential spec to use.')),
  gmsaCredentialSpec: p(2, t.string('The GMSA credential spec itself.')),
  runAsUserName: p(3, t.string('User name to run the entrypoint as.')),
  hostProcess: p(4, t.bool('Whether the container runs as a host process.')),
}, 'Windows-specific options.'));

export const SeccompProfile = define(core('SeccompProfile'), t.object({
  type: p(1, t.string('Localhost, RuntimeDefault or Unconfined.')),
  localhostProfile: p(2, t.string('Path of a profile on the node; only with type Localhost.')),
}, 'A seccomp profile.', { required: ['type'] }));

export const AppArmorProfile = define(core('AppArmorProfile'), t.object({
  type: p(1, t.string('Localhost, RuntimeDefault or Unconfined.')),
  localhostProfile: p(2, t.string('Name of a profile loaded on the node; only with type Localhost.')),
}, 'An AppArmor profile.', { required: ['type'] }));

const SecurityContext = define(core('SecurityContext'), t.object({
  capabilities: p(1, t.ref(Capabilities, 'Capabilities to add and drop.')),
  privileged: p(2, t.bool('Runs the container privileged (like root on the host).')),
  seLinuxOptions: p(3, t.ref(SELinuxOptions, 'SELinux context for the container.')),
  windowsOptions: p(10, t.ref(WindowsSecurityContextOptions, 'Windows-specific settings.')),
  runAsUser: p(4, t.int64('UID to run the entrypoint as.')),
  runAsGroup: p(8, t.int64('GID to run the entrypoint as.')),
  runAsNonRoot: p(5, t.bool('Requires the container to run as a non-root user.')),
  readOnlyRootFilesystem: p(6, t.bool('Mounts the root filesystem read-only.')),
  allowPrivilegeEscalation: p(7, t.bool('Whether a process may gain more privileges than its parent.')),
  procMount: p(9, t.string('Default or Unmasked.')),
  seccompProfile: p(11, t.ref(SeccompProfile, 'Seccomp options.')),
  appArmorProfile: p(12, t.ref(AppArmorProfile, 'AppArmor options.')),
}, 'Security options of a container; they win over the pod\'s.'));

/** The fields of a container, shared by Container and EphemeralContainer (upstream's EphemeralContainerCommon). */
export const containerFields = {
  name: p(1, t.string('Name of the container, a DNS label unique within the pod.')),
  image: p(2, t.string('Container image name.')),
  command: p(3, atomicStrings('Entrypoint; the image\'s ENTRYPOINT when unset. $(VAR_NAME) is expanded.')),
  args: p(4, atomicStrings('Arguments to the entrypoint; the image\'s CMD when unset. $(VAR_NAME) is expanded.')),
  workingDir: p(5, t.string('Working directory; the runtime\'s default when unset.')),
  ports: p(6, t.array(t.ref(ContainerPort), 'Ports to expose from the container (informational).', {
    patchMergeKey: 'containerPort', patchStrategy: 'merge', listType: 'map', listMapKeys: ['containerPort', 'protocol'],
  })),
  envFrom: p(19, t.array(t.ref(EnvFromSource), 'Sources of environment variables; env wins over them.', { listType: 'atomic' })),
  env: p(7, mergedBy('name', t.ref(EnvVar), 'Environment variables to set.')),
  resources: p(8, t.ref(ResourceRequirements, 'Compute resources required by the container.'), 'always'),
  resizePolicy: p(23, t.array(t.ref(ContainerResizePolicy), 'Resize policy per resource.', { listType: 'atomic' })),
  restartPolicy: p(24, t.string('Only Always, for init containers that run beside the others (sidecars).')),
  volumeMounts: p(9, mergedBy('mountPath', t.ref(VolumeMount), 'Volumes to mount into the filesystem.')),
  volumeDevices: p(21, mergedBy('devicePath', t.ref(VolumeDevice), 'Block devices to use.')),
  livenessProbe: p(10, t.ref(Probe, 'Restarts the container when it fails.')),
  readinessProbe: p(11, t.ref(Probe, 'Removes the pod from service endpoints when it fails.')),
  startupProbe: p(22, t.ref(Probe, 'Other probes wait until this one succeeds.')),
  lifecycle: p(12, t.ref(Lifecycle, 'Actions run on lifecycle events.')),
  terminationMessagePath: p(13, t.string('File the termination message is read from; /dev/termination-log when unset.')),
  terminationMessagePolicy: p(20, t.string('File or FallbackToLogsOnError; File when unset.', { enum: ['FallbackToLogsOnError', 'File'] })),
  imagePullPolicy: p(14, t.string('Always, Never or IfNotPresent; Always for :latest or no tag, IfNotPresent otherwise.', { enum: ['Always', 'IfNotPresent', 'Never'] })),
  securityContext: p(15, t.ref(SecurityContext, 'Security options of the container.')),
  stdin: p(16, t.bool('Allocates a buffer for stdin.')),
  stdinOnce: p(17, t.bool('Closes stdin after the first attach session.')),
  tty: p(18, t.bool('Allocates a TTY; needs stdin.')),
};

export const Container = define(core('Container'), t.object(containerFields, 'A single application container of a pod.', { required: ['name'] }));

const EphemeralContainerCommon = define(core('EphemeralContainerCommon'), t.object(containerFields, 'The container fields of an ephemeral container.'));

export const EphemeralContainer = define(core('EphemeralContainer'), t.object({
  ...containerFields,
  targetContainerName: p(2, t.string('Container whose namespaces (IPC, PID) this one joins.')),
}, 'A temporary container added to a running pod for debugging; it cannot be changed or removed.', {
  required: ['name'], protoInline: [{ proto: 1, schema: EphemeralContainerCommon }],
}));
