"""Conformance of ``kubectl get``: the columns the server prints (a meta.k8s.io Table) for
built-in kinds and a CRD's printer columns, under ``--watch`` too, and "No resources
found"."""

from __future__ import annotations

import re
import textwrap

import pytest

from kubesandbox import KubeSandbox

from .kubectl_support import DEPLOYMENT, Kubectl, needs_kubectl

pytestmark = [needs_kubectl, pytest.mark.processes]


@pytest.fixture
def sandbox_options() -> dict:
    return {"tls": True}


WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Colour, type: string, jsonPath: .spec.colour}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Size, type: integer, jsonPath: .spec.size, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              colour: {type: string}
              size: {type: integer}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""

TENANT_OBJECTS = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: default}
spec: {hard: {requests.cpu: "2", requests.memory: 4Gi, limits.memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: shell, namespace: default}
spec:
  containers: [{name: shell, image: "busybox:1.36"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}
- {kind: ServiceAccount, name: ci, namespace: default}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: default}
type: kubernetes.io/basic-auth
stringData: {username: u, password: p}
"""


def table(out: str) -> list[list[str]]:
    """kubectl's printed table as rows of cells (split on runs of two or more spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


def test_get_shows_the_columns_kube_apiserver_prints_for_built_in_kinds(
    kubectl: Kubectl,
) -> None:
    kubectl.ok("apply", "-f", "-", stdin=DEPLOYMENT + "---\n" + TENANT_OBJECTS)
    namespaces = table(kubectl.ok("get", "namespaces"))
    assert namespaces[0] == ["NAME", "STATUS", "AGE"]
    assert namespaces[1][:2] == ["default", "Active"]
    quota = table(kubectl.ok("get", "quota"))
    assert quota[0] == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert quota[1][0] == "compute"
    assert quota[1][2:] == [  # the shell pod asks for nothing, and counts
        "pods: 1/10, requests.cpu: 0/2, requests.memory: 0/4Gi",
        "limits.memory: 0/8Gi",
    ]
    pods = table(kubectl.ok("get", "pods"))
    assert pods[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert pods[1][:4] == ["shell", "0/1", "Pending", "0"]
    assert table(kubectl.ok("get", "pods", "-o", "wide"))[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    deployments = table(kubectl.ok("get", "deployments"))
    assert deployments[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert deployments[1][:4] == ["web", "0/2", "0", "0"]
    assert table(kubectl.ok("get", "deployments", "-o", "wide"))[0][5:] == [
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    config_maps = table(kubectl.ok("get", "configmaps"))
    assert config_maps[0] == ["NAME", "DATA", "AGE"]
    assert config_maps[1][:2] == ["settings", "1"]
    secrets = table(kubectl.ok("get", "secrets"))
    assert secrets[0] == ["NAME", "TYPE", "DATA", "AGE"]
    assert secrets[1][:3] == ["token", "kubernetes.io/basic-auth", "2"]
    bindings = table(kubectl.ok("get", "rolebindings", "-o", "wide"))
    assert bindings[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert bindings[1][:2] == ["readers", "ClusterRole/view"]
    assert bindings[1][3:] == ["devs", "default/ci"]  # no users: an empty cell
    one = table(kubectl.ok("get", "namespace", "default"))
    assert one[0] == ["NAME", "STATUS", "AGE"] and one[1][:2] == ["default", "Active"]
    everywhere = table(kubectl.ok("get", "configmaps", "--all-namespaces"))
    assert everywhere[0] == ["NAMESPACE", "NAME", "DATA", "AGE"]


def test_get_shows_a_custom_kinds_printer_columns(kubectl: Kubectl, sandbox: KubeSandbox) -> None:
    kubectl.ok("apply", "-f", "-", stdin=WIDGET_CRD)
    kubectl.ok(
        "apply",
        "-f",
        "-",
        stdin=textwrap.dedent("""\
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: w, namespace: default}
        spec: {colour: blue, size: 3}
    """),
    )
    widget = sandbox.get("Widget", "w", "default")
    sandbox.upsert(
        {
            **widget,
            "status": {
                "conditions": [
                    {"type": "Synced", "status": "False"},
                    {"type": "Ready", "status": "True"},
                ]
            },
        }
    )
    widgets = table(kubectl.ok("get", "widgets"))
    assert widgets[0] == ["NAME", "COLOUR", "READY", "AGE"]
    assert widgets[1][:3] == ["w", "blue", "True"]
    assert table(kubectl.ok("get", "widgets", "-o", "wide"))[0] == [
        "NAME",
        "COLOUR",
        "READY",
        "SIZE",
        "AGE",
    ]


def test_get_watch_prints_each_change_under_the_same_columns(kubectl: Kubectl) -> None:
    kubectl.ok("create", "configmap", "first", "--from-literal=a=b")
    watcher = kubectl.start("get", "configmaps", "--watch", "--request-timeout=20s")
    try:
        assert watcher.stdout is not None
        listed = [watcher.stdout.readline(), watcher.stdout.readline()]
        # The watch starts at the list's version: what changes from here on is printed.
        kubectl.ok("create", "configmap", "second", "--from-literal=a=b", "--from-literal=c=d")
        changed = watcher.stdout.readline()
    finally:
        watcher.kill()
        watcher.communicate()
    assert table("".join(listed))[0] == ["NAME", "DATA", "AGE"]
    assert table("".join(listed))[1][:2] == ["first", "1"]
    assert table(changed)[0][:2] == ["second", "2"]  # a row, no second header


def test_an_empty_cluster_scoped_list_names_no_namespace(kubectl: Kubectl) -> None:
    result = kubectl("get", "clusterroles", "-l", "team=nobody")
    assert (result.returncode, result.stdout, result.stderr.strip()) == (
        0,
        "",
        "No resources found",
    )
    result = kubectl("get", "configmaps", "-l", "team=nobody")
    assert result.stderr.strip() == "No resources found in default namespace."
