"""Drives a plat-apiserver with the official Python client, as a new user would.

Usage: client_check.py KUBECONFIG NAMESPACE. Prints one line per step and
exits non-zero (with the reason) on the first thing that does not work.
"""
import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient


def step(text):
    print(text, flush=True)


def expect_status(call, status):
    try:
        call()
    except ApiException as e:
        assert e.status == status, f"expected {status}, got {e.status}: {e.body}"
        return
    raise AssertionError(f"expected {status}, the call succeeded")


kubeconfig, ns = sys.argv[1], sys.argv[2]
api_client = config.new_client_from_config(config_file=kubeconfig)
v1 = client.CoreV1Api(api_client)
meta = client.V1ObjectMeta

v1.create_namespace(client.V1Namespace(metadata=meta(name=ns)))
step("namespace created")

# CRUD
made = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=meta(name="one", labels={"app": "py"}), data={"a": "1"}))
assert made.metadata.uid and made.metadata.resource_version
got = v1.read_namespaced_config_map("one", ns)
assert got.data == {"a": "1"}, got.data
got.data["b"] = "2"
replaced = v1.replace_namespaced_config_map("one", ns, got)
assert replaced.data == {"a": "1", "b": "2"}, replaced.data
patched = v1.patch_namespaced_config_map("one", ns, {"data": {"c": "3"}})
assert patched.data == {"a": "1", "b": "2", "c": "3"}, patched.data
expect_status(lambda: v1.replace_namespaced_config_map("missing", ns, client.V1ConfigMap(metadata=meta(name="missing"))), 404)
expect_status(lambda: v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=meta(name="one"))), 409)
step("crud ok")

# Paging along continue tokens
for i in range(7):
    v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=meta(name=f"page-{i}", labels={"page": "yes"})))
names, token, pages = [], None, 0
while True:
    page = v1.list_namespaced_config_map(ns, label_selector="page=yes", limit=3, _continue=token)
    pages += 1
    names += [item.metadata.name for item in page.items]
    token = page.metadata._continue
    if not token:
        break
assert pages == 3 and sorted(names) == [f"page-{i}" for i in range(7)], (pages, names)
step("paging ok")

# A watch (the client sends watch=True) from a listed resourceVersion
rv = v1.list_namespaced_config_map(ns).metadata.resource_version
v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=meta(name="watched")))
w = watch.Watch()
seen = None
for event in w.stream(v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=20):
    seen = (event["type"], event["object"].metadata.name)
    w.stop()
assert seen == ("ADDED", "watched"), seen
step("watch ok")

# Server-side apply through the dynamic client: a conflict, then forced (force=True on the query).
# This client version sends an apply body only when it comes already serialized (JSON is YAML).
configmaps = DynamicClient(api_client).resources.get(api_version="v1", kind="ConfigMap")
applied = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one", "namespace": ns}, "data": {"a": "from-apply"}})
apply = lambda **kw: configmaps.server_side_apply(body=applied, name="one", namespace=ns, field_manager="py-apply", **kw)
expect_status(apply, 409)
forced = apply(force_conflicts=True)
assert forced.data["a"] == "from-apply", forced.data
owners = {entry.manager for entry in forced.metadata.managedFields}
assert "py-apply" in owners, owners
step("forced apply ok")

# Deletes
v1.delete_namespaced_config_map("one", ns)
expect_status(lambda: v1.read_namespaced_config_map("one", ns), 404)
v1.delete_collection_namespaced_config_map(ns, label_selector="page=yes")
left = v1.list_namespaced_config_map(ns, label_selector="page=yes").items
assert left == [], [i.metadata.name for i in left]
step("delete ok")
