"""Drives the workload kinds with the official Python client's typed APIs (22.6:
older than CronJob.timeZone and autoscaling/v2, which it therefore leaves out).

Usage: workloads_check.py KUBECONFIG NAMESPACE. Prints one line per step and
exits non-zero (with the reason) on the first thing that does not work.
"""
import sys

from kubernetes import client, config


def step(text):
    print(text, flush=True)


kubeconfig, ns = sys.argv[1], sys.argv[2]
api_client = config.new_client_from_config(config_file=kubeconfig)
core = client.CoreV1Api(api_client)
apps = client.AppsV1Api(api_client)
batch = client.BatchV1Api(api_client)
autoscaling = client.AutoscalingV1Api(api_client)
meta = client.V1ObjectMeta

core.create_namespace(client.V1Namespace(metadata=meta(name=ns)))
template = client.V1PodTemplateSpec(
    metadata=meta(labels={"app": "web"}),
    spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx")]),
)

# AppsV1Api: a deployment, its scale and status, a list of every kind of the group
made = apps.create_namespaced_deployment(ns, client.V1Deployment(
    metadata=meta(name="web"),
    spec=client.V1DeploymentSpec(selector=client.V1LabelSelector(match_labels={"app": "web"}), template=template),
))
assert made.spec.replicas == 1 and made.spec.strategy.type == "RollingUpdate", made.spec
assert made.spec.strategy.rolling_update.max_surge == "25%", made.spec.strategy
scale = apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 4}})
assert scale.spec.replicas == 4, scale
assert apps.read_namespaced_deployment_scale("web", ns).status.selector == "app=web"
status = apps.read_namespaced_deployment_status("web", ns)
assert status.spec.replicas == 4 and status.status.observed_generation is None, status.status
apps.create_namespaced_stateful_set(ns, client.V1StatefulSet(
    metadata=meta(name="db"),
    spec=client.V1StatefulSetSpec(selector=client.V1LabelSelector(match_labels={"app": "web"}), template=template, service_name="db"),
))
apps.create_namespaced_daemon_set(ns, client.V1DaemonSet(
    metadata=meta(name="agent"),
    spec=client.V1DaemonSetSpec(selector=client.V1LabelSelector(match_labels={"app": "web"}), template=template),
))
assert [d.metadata.name for d in apps.list_namespaced_deployment(ns).items] == ["web"]
assert apps.read_namespaced_stateful_set("db", ns).spec.pod_management_policy == "OrderedReady"
assert apps.read_namespaced_daemon_set("agent", ns).spec.update_strategy.rolling_update.max_unavailable == 1
assert apps.list_namespaced_replica_set(ns).items == []
step("apps ok")

# BatchV1Api: a job (its selector generated) and a cron job
job_template = client.V1PodTemplateSpec(spec=client.V1PodSpec(restart_policy="Never", containers=[client.V1Container(name="task", image="busybox")]))
job = batch.create_namespaced_job(ns, client.V1Job(metadata=meta(name="once"), spec=client.V1JobSpec(template=job_template, ttl_seconds_after_finished=600)))
assert job.spec.backoff_limit == 6 and job.spec.completion_mode == "NonIndexed", job.spec
assert job.spec.selector.match_labels, job.spec.selector
cron = batch.create_namespaced_cron_job(ns, client.V1CronJob(
    metadata=meta(name="nightly"),
    spec=client.V1CronJobSpec(schedule="0 3 * * *", job_template=client.V1JobTemplateSpec(spec=client.V1JobSpec(template=job_template))),
))
assert cron.spec.concurrency_policy == "Allow" and cron.spec.successful_jobs_history_limit == 3, cron.spec
try:
    batch.create_namespaced_cron_job(ns, client.V1CronJob(metadata=meta(name="bad"), spec=client.V1CronJobSpec(schedule="61 * * * *", job_template=cron.spec.job_template)))
    raise AssertionError("a bad schedule was accepted")
except client.rest.ApiException as e:
    assert e.status == 422 and "end of range (61) above maximum (59)" in e.body, e.body
assert [j.metadata.name for j in batch.list_namespaced_job(ns).items] == ["once"]
step("batch ok")

# AutoscalingV1Api (this client predates autoscaling/v2): v1 is converted to the stored v2 and back
hpa = autoscaling.create_namespaced_horizontal_pod_autoscaler(ns, client.V1HorizontalPodAutoscaler(
    metadata=meta(name="web"),
    spec=client.V1HorizontalPodAutoscalerSpec(scale_target_ref=client.V1CrossVersionObjectReference(kind="Deployment", name="web", api_version="apps/v1"), max_replicas=5),
))
assert hpa.spec.target_cpu_utilization_percentage == 80 and hpa.spec.min_replicas == 1, hpa.spec
step("autoscaling ok")

apps.delete_namespaced_deployment("web", ns)
batch.delete_namespaced_job("once", ns, propagation_policy="Background")
step("delete ok")
