"""The stand-in's discovery documents, version and health endpoints."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from kubesandbox import KubeSandbox

from .conftest import (
    raw,
)


def test_version_answers_with_and_without_trailing_slash(
    sandbox: KubeSandbox, api_client: client.ApiClient
) -> None:
    assert client.VersionApi(api_client).get_code().git_version.startswith("v1.")
    status, body = raw(sandbox, "GET", "/version/")
    assert status == 200
    assert body["major"] == "1"


def test_core_discovery_reports_scope_kind_and_verbs(core: client.CoreV1Api) -> None:
    found = {r.name: r for r in core.get_api_resources().resources}
    assert found["namespaces"].namespaced is False
    assert found["namespaces"].kind == "Namespace"
    assert found["configmaps"].namespaced is True
    assert {"create", "get", "list", "patch", "update", "delete"} <= set(found["secrets"].verbs)
    assert "namespaces/status" in found
    assert {"serviceaccounts", "services", "resourcequotas", "limitranges"} <= set(found)


@pytest.mark.crds
def test_api_group_list_names_every_served_group(api_client: client.ApiClient) -> None:
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    assert set(groups) == {
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "policy",
        "scheduling.k8s.io",
        "autoscaling",
        "coordination.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        # from the upstream CRDs the sandbox was started with
        "argoproj.io",
        "kargo.akuity.io",
        "source.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
    }
    assert groups["kargo.akuity.io"].preferred_version.group_version == "kargo.akuity.io/v1alpha1"


def test_group_discovery_marks_admission_policies_cluster_scoped(
    api_client: client.ApiClient,
) -> None:
    listing = client.AdmissionregistrationV1Api(api_client).get_api_resources()
    scopes = {r.name: r.namespaced for r in listing.resources if "/" not in r.name}
    assert scopes == {
        "validatingadmissionpolicies": False,
        "validatingadmissionpolicybindings": False,
        "validatingwebhookconfigurations": False,
        "mutatingwebhookconfigurations": False,
    }


@pytest.mark.crds
def test_dynamic_client_discovers_custom_resources(dynamic: DynamicClient, team: str) -> None:
    project = dynamic.resources.get(api_version="kargo.akuity.io/v1alpha1", kind="Project")
    stage = dynamic.resources.get(api_version="kargo.akuity.io/v1alpha1", kind="Stage")
    assert (project.namespaced, stage.namespaced) == (False, True)
    for api_version, kind in [
        ("argoproj.io/v1alpha1", "AppProject"),
        ("source.toolkit.fluxcd.io/v1", "GitRepository"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
    ]:
        resource = dynamic.resources.get(api_version=api_version, kind=kind)
        assert resource.get(namespace=team).kind == f"{kind}List"


def test_unknown_resource_type_is_404(sandbox: KubeSandbox) -> None:
    for path in ["/api/v1/namespaces/default/widgets", "/apis/example.com/v1", "/nothing"]:
        status, body = raw(sandbox, "GET", path)
        assert (status, body["kind"], body["reason"]) == (404, "Status", "NotFound"), path


def test_health_endpoints_answer_ok(sandbox: KubeSandbox) -> None:
    assert raw(sandbox, "GET", "/healthz") == (200, "ok")
