"""Conformance of kubectl 1.32's typed ``create`` subcommands: they send protobuf, and what the
stand-in stores is the object kubectl built (what ``--dry-run=client -o json`` prints)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesandbox import KubeSandbox

from .kubectl_support import Kubectl, needs_kubectl

pytestmark = [needs_kubectl, pytest.mark.processes]


@pytest.fixture
def sandbox_options() -> dict:
    return {"tls": True}


# The arguments after `kubectl create`.
TYPED_CREATES = (
    (
        "ingress",
        "shop",
        "--class=nginx",
        "--rule=shop.example.com/=web:80",
        "--rule=shop.example.com/api*=api:http,tls=shop-cert",
        "--rule=/status=status:8080",
        "--default-backend=fallback:80",
        "--annotation=nginx.ingress.kubernetes.io/rewrite-target=/",
    ),
    ("poddisruptionbudget", "web", "--selector=app=web", "--min-available=0"),
    ("pdb", "api", "--selector=app in (api,worker)", "--max-unavailable=50%"),
    ("priorityclass", "batch", "--description=Batch jobs", "--value=0"),
    (
        "priorityclass",
        "urgent",
        "--value=1000",
        "--preemption-policy=Never",
    ),
    (
        "clusterrole",
        "reader",
        "--verb=get,list",
        "--resource=pods,deployments.apps,pods/log",
    ),
    ("clusterrole", "logs", "--verb=get", "--non-resource-url=/logs/*"),
    (
        "clusterrole",
        "monitoring",
        "--aggregation-rule=example.com/aggregate-to-monitoring=true",
    ),
    (
        "clusterrolebinding",
        "readers",
        "--clusterrole=reader",
        "--user=alice",
        "--group=devs",
        "--serviceaccount=default:ci",
    ),
    ("namespace", "shop"),
    ("service", "nodeport", "entry", "--tcp=5678:8080", "--node-port=30080"),
    ("service", "loadbalancer", "front", "--tcp=80:8080"),
    ("service", "externalname", "db", "--external-name=db.example.com"),
    ("quota", "compute", "--hard=pods=2,requests.cpu=1", "--scopes=NotBestEffort"),
)


def _pruned(value: Any) -> Any:
    """Without empty values, as JSON's omitempty leaves them out."""
    if isinstance(value, dict):
        pruned = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _as_built(obj: dict[str, Any]) -> dict[str, Any]:
    """An object without what the server adds (its metadata, the namespace's name label)."""
    added = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")
    meta = {k: v for k, v in obj["metadata"].items() if k not in (*added, "namespace")}
    labels = meta.get("labels") or {}
    meta["labels"] = {k: v for k, v in labels.items() if not k.startswith("kubernetes.io/")}
    return _pruned({**obj, "metadata": meta, "status": None})


def test_typed_creates_store_the_object_kubectl_built(kubectl: Kubectl) -> None:
    for args in TYPED_CREATES:
        built = json.loads(kubectl.ok("create", "--dry-run=client", "-o", "json", *args))
        # With -o, kubectl prints the server's answer: the object as stored.
        stored = json.loads(kubectl.ok("create", "-o", "json", *args))
        assert stored["metadata"]["uid"], args
        assert _as_built(stored) == _as_built(built), args


def test_create_ingress_with_tls_and_annotations(kubectl: Kubectl, sandbox: KubeSandbox) -> None:
    out = kubectl.ok(
        "create",
        "ingress",
        "shop",
        "--class=nginx",
        "--rule=shop.example.com/*=web:80,tls=shop-cert",
        "--rule=shop.example.com/api=api:http",
        "--annotation=nginx.ingress.kubernetes.io/ssl-redirect=true",
    )
    assert out.strip() == "ingress.networking.k8s.io/shop created"
    ingress = sandbox.get("Ingress", "shop", "default")
    assert ingress["metadata"]["annotations"] == {
        "nginx.ingress.kubernetes.io/ssl-redirect": "true"
    }
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert ingress["spec"]["tls"] == [{"hosts": ["shop.example.com"], "secretName": "shop-cert"}]
    paths = [p for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    assert paths == [
        {
            "path": "/",
            "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 80}}},
        },
        {
            "path": "/api",
            "pathType": "Exact",
            "backend": {"service": {"name": "api", "port": {"name": "http"}}},
        },
    ]
    listed = kubectl.ok("get", "ingress", "-o", "name")
    assert listed.split() == ["ingress.networking.k8s.io/shop"]
