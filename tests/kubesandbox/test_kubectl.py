"""Conformance: the real kubectl (1.32 on PATH, or $KUBECTL) against a running stand-in, with
the kubeconfig the stand-in writes. Each test is something a tenant types."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesandbox import KubeSandbox
from kubesandbox.testing import upstream_crds

KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl on PATH (or $KUBECTL)")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {colour: blue}
"""


class Kubectl:
    def __init__(self, kubeconfig: Path) -> None:
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(kubeconfig.parent)}
        self.workdir = kubeconfig.parent

    def __call__(
        self, *args: str, stdin: str | None = None, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECTL or "kubectl", *args],
            input=stdin,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, *args: str, stdin: str | None = None) -> str:
        result = self(*args, stdin=stdin)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def refused(self, *args: str, stdin: str | None = None) -> str:
        result = self(*args, stdin=stdin)
        assert result.returncode != 0, result.stdout
        return result.stderr


@pytest.fixture
def sandbox(request: pytest.FixtureRequest) -> Iterator[KubeSandbox]:
    crds = upstream_crds() if request.node.get_closest_marker("crds") else ()
    with KubeSandbox(tls=True, crds=crds) as running:
        yield running


@pytest.fixture
def kubectl(sandbox: KubeSandbox, tmp_path: Path) -> Kubectl:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(sandbox.kubeconfig()))
    return Kubectl(kubeconfig)


def test_apply_with_client_validation_creates_a_deployment_and_a_config_map(
    kubectl: Kubectl, sandbox: KubeSandbox
) -> None:
    out = kubectl.ok("apply", "-f", "-", stdin=DEPLOYMENT)
    assert out.splitlines() == ["deployment.apps/web created", "configmap/settings created"]
    assert sandbox.get("Deployment", "web", "default")["spec"]["replicas"] == 2
    assert kubectl.ok("apply", "-f", "-", stdin=DEPLOYMENT).splitlines() == [
        "deployment.apps/web unchanged",
        "configmap/settings unchanged",
    ]
    assert kubectl("diff", "-f", "-", stdin=DEPLOYMENT).returncode == 0  # nothing would change
    assert kubectl.ok("scale", "deployment/web", "--replicas=4").strip() == (
        "deployment.apps/web scaled"
    )
    assert sandbox.get("Deployment", "web", "default")["spec"]["replicas"] == 4


def test_explain_reads_the_served_openapi(kubectl: Kubectl) -> None:
    out = kubectl.ok("explain", "deployment.spec.replicas")
    assert "FIELD: replicas <integer>" in out
    assert "Number of desired pods" in out


def test_imperative_create_commands_send_protobuf_the_stand_in_reads(
    kubectl: Kubectl, sandbox: KubeSandbox
) -> None:
    kubectl.ok("create", "configmap", "plain", "--from-literal=a=b")
    kubectl.ok("create", "secret", "generic", "creds", "--from-literal=password=hunter2")
    kubectl.ok("create", "deployment", "shop", "--image=nginx", "--replicas=3")
    assert sandbox.get("ConfigMap", "plain", "default")["data"] == {"a": "b"}
    assert sandbox.get("Secret", "creds", "default")["data"] == {"password": "aHVudGVyMg=="}
    deployment = sandbox.get("Deployment", "shop", "default")
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"


def test_auth_can_i_and_whoami(kubectl: Kubectl) -> None:
    assert kubectl.ok("auth", "can-i", "create", "deployments").strip() == "yes"
    result = kubectl("auth", "can-i", "create", "deployments", "--as", "bob")
    assert (result.returncode, result.stdout.strip()) == (1, "no")
    out = kubectl.ok("auth", "whoami")
    assert "kubesandbox-admin" in out and "system:masters" in out
    out = kubectl.ok("auth", "whoami", "--as", "bob", "--as-group", "devs")
    assert "bob" in out and "devs" in out


def test_a_service_account_token_is_that_account_and_gets_what_it_is_bound_to(
    kubectl: Kubectl,
) -> None:
    kubectl.ok("create", "serviceaccount", "ci")
    token = kubectl.ok("create", "token", "ci").strip()
    as_ci = ("--token", token)
    assert "system:serviceaccount:default:ci" in kubectl.ok("auth", "whoami", *as_ci)
    assert kubectl("auth", "can-i", "create", "configmaps", *as_ci).stdout.strip() == "no"
    stderr = kubectl.refused("create", "configmap", "x", *as_ci)
    assert (
        'configmaps is forbidden: User "system:serviceaccount:default:ci" cannot create '
        'resource "configmaps" in API group "" in the namespace "default"'
    ) in stderr
    kubectl.ok(
        "create", "rolebinding", "ci-edit", "--clusterrole=edit", "--serviceaccount=default:ci"
    )
    assert kubectl.ok("auth", "can-i", "create", "configmaps", *as_ci).strip() == "yes"
    assert kubectl("auth", "can-i", "create", "roles", *as_ci).stdout.strip() == "no"


def test_protected_namespaces_cannot_be_deleted(kubectl: Kubectl) -> None:
    for namespace in ("kube-system", "default"):
        stderr = kubectl.refused("delete", "namespace", namespace)
        assert f'namespaces "{namespace}" is forbidden: this namespace may not be deleted' in (
            stderr
        )


def test_an_unknown_field_is_refused_under_strict_validation(kubectl: Kubectl) -> None:
    stderr = kubectl.refused(
        "apply",
        "-f",
        "-",
        stdin=DEPLOYMENT.replace("data: {colour: blue}", "data: {colour: blue}\ncolour: blue"),
    )
    assert 'strict decoding error: unknown field "colour"' in stderr


def test_a_bad_quantity_is_refused(kubectl: Kubectl) -> None:
    quota = textwrap.dedent("""\
        apiVersion: v1
        kind: ResourceQuota
        metadata: {name: compute}
        spec: {hard: {requests.cpu: lots}}
    """)
    stderr = kubectl.refused("apply", "-f", "-", stdin=quota)
    assert "quantities must match the regular expression" in stderr


def test_a_role_binding_without_role_ref_is_invalid(kubectl: Kubectl) -> None:
    binding = textwrap.dedent("""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata: {name: readers}
        subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
    """)
    stderr = kubectl.refused("apply", "-f", "-", stdin=binding)
    assert 'The RoleBinding "readers" is invalid' in stderr
    assert "roleRef.name: Required value" in stderr


def test_get_watch_receives_an_event(kubectl: Kubectl, sandbox: KubeSandbox) -> None:
    watcher = subprocess.Popen(
        [
            KUBECTL or "kubectl",
            "get",
            "configmaps",
            "--watch-only",
            "--request-timeout=5s",
            "-o",
            "name",
        ],
        env=kubectl.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.0)  # let it list and start watching
        kubectl.ok("create", "configmap", "watched", "--from-literal=a=b")
        out, _ = watcher.communicate(timeout=15)
    finally:
        watcher.kill()
    assert "configmap/watched" in out


@pytest.mark.crds
def test_custom_resources_apply_and_explain_from_their_crd(kubectl: Kubectl) -> None:
    application = textwrap.dedent("""\
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: shop, namespace: default}
        spec:
          project: default
          destination: {server: "https://kubernetes.default.svc", namespace: shop}
    """)
    assert kubectl.ok("apply", "-f", "-", stdin=application).strip() == (
        "application.argoproj.io/shop created"
    )
    stderr = kubectl.refused(
        "apply",
        "-f",
        "-",
        stdin=application.replace("project: default", "project: default\n  colour: blue"),
    )
    assert 'unknown field "spec.colour"' in stderr
    out = kubectl.ok("explain", "applications.spec.project")
    assert "FIELD: project <string>" in out


# -- kubectl get: the columns the server prints (a meta.k8s.io Table) -------------------

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
    assert quota[1][2:] == [
        "pods: 0/10, requests.cpu: 0/2, requests.memory: 0/4Gi",
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
    watcher = subprocess.Popen(
        [KUBECTL or "kubectl", "get", "configmaps", "--watch", "--request-timeout=20s"],
        env=kubectl.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
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
