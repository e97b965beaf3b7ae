"""Custom resources with the official Python client: a definition created with
the typed ApiextensionsV1Api, then its kind used through the dynamic client.

Usage: custom_check.py KUBECONFIG CRD_JSON. Prints one line per step and
exits non-zero (with the reason) on the first thing that does not work.
"""
import json
import sys
import time

from kubernetes import client, config
from kubernetes.dynamic import DynamicClient


def step(text):
    print(text, flush=True)


kubeconfig, crd_json = sys.argv[1], sys.argv[2]
api_client = config.new_client_from_config(config_file=kubeconfig)
ext = client.ApiextensionsV1Api(api_client)
crd = json.loads(crd_json)
ext.create_custom_resource_definition(crd)
name = crd["metadata"]["name"]
for _ in range(200):
    got = ext.read_custom_resource_definition(name)
    if any(c.type == "Established" and c.status == "True" for c in (got.status.conditions or [])):
        break
    time.sleep(0.05)
else:
    raise AssertionError("the definition was never established")
step("definition established")

dyn = DynamicClient(api_client)
widgets = dyn.resources.get(api_version="stable.example.com/v1", kind="Widget")
made = widgets.create(body={"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": "py"}, "spec": {"replicas": 3}}, namespace="default")
assert made.spec.color == "red", made.spec  # defaulted by the schema
listed = widgets.get(namespace="default")
assert [i.metadata.name for i in listed.items] == ["py"], listed
patched = widgets.patch(name="py", namespace="default", body={"spec": {"color": "blue"}}, content_type="application/merge-patch+json")
assert patched.spec.color == "blue" and patched.spec.replicas == 3, patched.spec
widgets.delete(name="py", namespace="default")
step("dynamic client ok")
ext.delete_custom_resource_definition(name)
step("definition deleted")
