"""Conformance: the real kubectl (1.32 on PATH, or $KUBECTL) against a running stand-in, with
the kubeconfig the stand-in writes. Each test is something a tenant types; what
``kubectl get`` prints is in ``test_kubectl_get``."""

from __future__ import annotations

import textwrap

import pytest

from kubesandbox import KubeSandbox

from .kubectl_support import DEPLOYMENT, Kubectl, needs_kubectl, wait_for_request

pytestmark = [needs_kubectl, pytest.mark.processes]


@pytest.fixture
def sandbox_options() -> dict:
    return {"tls": True}


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
    with_colour = DEPLOYMENT.replace("data: {colour: blue}", "data: {colour: blue}\ncolour: blue")
    stderr = kubectl.refused("apply", "-f", "-", stdin=with_colour)
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
    watcher = kubectl.start(
        "get", "configmaps", "--watch-only", "--request-timeout=5s", "-o", "name"
    )
    try:
        # kubectl watches from the version its list answered: once the list is served, what
        # is created is an event for the watch, however long kubectl took to get there.
        wait_for_request(sandbox, "GET", "/api/v1/namespaces/default/configmaps")
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
    with_colour = application.replace("project: default", "project: default\n  colour: blue")
    stderr = kubectl.refused("apply", "-f", "-", stdin=with_colour)
    assert 'unknown field "spec.colour"' in stderr
    out = kubectl.ok("explain", "applications.spec.project")
    assert "FIELD: project <string>" in out
