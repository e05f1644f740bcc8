"""Conformance of ``kubectl describe quota`` and ``kubectl get quota``: with no quota controller,
the stand-in serves a ResourceQuota's status as the controller would keep it, so kubectl shows
what the namespace uses against what is hard."""

from __future__ import annotations

import re
import textwrap

import pytest

from .kubectl_support import Kubectl, needs_kubectl

pytestmark = [needs_kubectl, pytest.mark.processes]


@pytest.fixture
def sandbox_options() -> dict:
    return {"tls": True}


QUOTA_AND_WORKLOADS = textwrap.dedent("""\
    apiVersion: v1
    kind: ResourceQuota
    metadata: {name: compute, namespace: default}
    spec:
      hard:
        pods: "10"
        requests.cpu: "2"
        requests.memory: 4Gi
        limits.cpu: "4"
        limits.memory: 8Gi
        services: "5"
        configmaps: "10"
        persistentvolumeclaims: "2"
        requests.storage: 20Gi
        count/deployments.apps: "3"
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: web, namespace: default}
    spec:
      initContainers:
      - {name: migrate, image: busybox, resources: {requests: {cpu: "1", memory: 64Mi}}}
      containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 250m, memory: 256Mi}
          limits: {cpu: 500m, memory: 512Mi}
      - name: proxy
        image: envoy
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 200m, memory: 128Mi}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: api, namespace: default}
    spec:
      containers:
      - name: api
        image: nginx
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
    ---
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data, namespace: default}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 5Gi}}}
""")


def rows(out: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


def test_describe_quota_shows_what_the_namespace_uses_against_what_is_hard(
    kubectl: Kubectl,
) -> None:
    kubectl.ok("apply", "-f", "-", stdin=QUOTA_AND_WORKLOADS)
    kubectl.ok("create", "service", "clusterip", "web", "--tcp=80:8080")
    kubectl.ok("create", "configmap", "settings", "--from-literal=colour=blue")
    kubectl.ok("create", "deployment", "shop", "--image=nginx")
    described = rows(kubectl.ok("describe", "quota", "compute"))
    assert described[:2] == [["Name:", "compute"], ["Namespace:", "default"]]
    assert described[2:] == [
        ["Resource", "Used", "Hard"],
        ["--------", "----", "----"],
        ["configmaps", "1", "10"],
        ["count/deployments.apps", "1", "3"],
        # 500m + 200m, and 1 for the api pod; requests: the init container's 1 CPU is more
        # than the web pod's containers ask together.
        ["limits.cpu", "1700m", "4"],
        ["limits.memory", "1664Mi", "8Gi"],
        ["persistentvolumeclaims", "1", "2"],
        ["pods", "2", "10"],
        ["requests.cpu", "1500m", "2"],
        ["requests.memory", "1344Mi", "4Gi"],
        ["requests.storage", "5Gi", "20Gi"],
        ["services", "1", "5"],
    ]
    listed = rows(kubectl.ok("get", "quota"))
    assert listed[0] == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert listed[1][2:] == [
        "configmaps: 1/10, count/deployments.apps: 1/3, persistentvolumeclaims: 1/2, "
        "pods: 2/10, requests.cpu: 1500m/2, requests.memory: 1344Mi/4Gi, "
        "requests.storage: 5Gi/20Gi, services: 1/5",
        "limits.cpu: 1700m/4, limits.memory: 1664Mi/8Gi",
    ]
    kubectl.ok("delete", "pod", "api")
    described = dict((r[0], r[1:]) for r in rows(kubectl.ok("describe", "quota", "-n", "default")))
    assert described["pods"] == ["1", "10"]
    assert described["requests.cpu"] == ["1", "2"]


def test_describe_a_scoped_quota_counts_only_the_pods_in_its_scope(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", stdin=QUOTA_AND_WORKLOADS)
    kubectl.ok("create", "quota", "best-effort", "--hard=pods=5", "--scopes=BestEffort")
    kubectl.ok("run", "shell", "--image=busybox", "--restart=Never")
    described = rows(kubectl.ok("describe", "quota", "best-effort"))
    assert ["Scopes:", "BestEffort"] in described
    assert described[-1] == ["pods", "1", "5"]  # the shell; web and api ask for resources
