"""Berth's own guardrail policies (provisioning.guardrails) work unchanged against the
stand-in's ValidatingAdmissionPolicy enforcement."""

from __future__ import annotations

import pytest

from kubesandbox import KubeSandbox

from .admission_support import as_user, cluster_role_binding
from .conftest import raw

BERTH = "system:serviceaccount:berth-system:berth"


@pytest.fixture
def guardrails(sandbox: KubeSandbox) -> None:
    from provisioning.guardrails import bootstrap_objects
    from provisioning.plan import DOMAINS_CONFIG, ClusterSpec

    cluster = ClusterSpec(
        name="prod", argocd_namespace="argocd", has_kargo=False, ingress_namespace="ingress-nginx"
    )
    for obj in bootstrap_objects(cluster, berth_namespace="berth-system"):
        sandbox.upsert(obj)
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "payments-shop-dev", "labels": {"berth.dev/tenant": "payments"}},
        }
    )
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",  # as the namespace's bundle has it
            "metadata": {
                "name": DOMAINS_CONFIG,
                "namespace": "payments-shop-dev",
                "labels": {"app.kubernetes.io/managed-by": "berth"},
            },
            "data": {"payments.example.com": "allowed"},
        }
    )
    sandbox.upsert(cluster_role_binding("berth", "cluster-admin", "ServiceAccount", BERTH))
    sandbox.upsert(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "dana-edit", "namespace": "payments-shop-dev"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "edit",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "dana"}],
        }
    )


def ingress(name: str, host: str) -> dict:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name},
        "spec": {
            "rules": [
                {
                    "host": host,
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
                }
            ]
        },
    }


def test_berths_ingress_domain_policy_admits_the_tenants_hosts_only(
    sandbox: KubeSandbox, guardrails: None
) -> None:
    path = "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/ingresses"
    dana = as_user("dana")
    assert (
        raw(sandbox, "POST", path, ingress("shop", "shop.payments.example.com"), headers=dana)[0]
        == 201
    )
    status, body = raw(sandbox, "POST", path, ingress("evil", "www.example.org"), headers=dana)
    assert status == 403
    assert body["message"].startswith(
        "ValidatingAdmissionPolicy 'berth-ingress-domains' with binding "
        "'berth-ingress-domains' denied request: Every Ingress rule must name a "
        "host in the tenant's allowed domains"
    )


def test_berths_objects_are_changed_by_berth_only(sandbox: KubeSandbox, guardrails: None) -> None:
    path = "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/networkpolicies"
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "berth-default-deny",
            "labels": {"app.kubernetes.io/managed-by": "berth"},
        },
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }
    status, body = raw(sandbox, "POST", path, policy, headers=as_user("dana"))
    assert (status, body["reason"]) == (403, "Forbidden")
    assert "This object is Berth's" in body["message"]
    assert raw(sandbox, "POST", path, policy, headers=as_user(BERTH))[0] == 201
    status, _ = raw(sandbox, "DELETE", f"{path}/berth-default-deny", headers=as_user("dana"))
    assert status == 403
    assert raw(sandbox, "DELETE", f"{path}/berth-default-deny", headers=as_user(BERTH))[0] == 200
