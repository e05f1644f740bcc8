"""A ResourceQuota's status as the quota controller would keep it (``kubesandbox.quota``), and
the quantity sums it is made of (``kubesandbox.quantity``)."""

from __future__ import annotations

import json

import pytest
import urllib3

from kubesandbox import KubeSandbox
from kubesandbox.quantity import parse, total
from kubesandbox.quota import pod_totals

from .conftest import raw

QUOTAS = "/api/v1/namespaces/default/resourcequotas"


@pytest.mark.parametrize(
    ("terms", "printed"),
    [
        (["100m", "200m"], "300m"),
        (["1", "500m"], "1500m"),
        (["1Gi", "512Mi"], "1536Mi"),
        (["512Mi", "512Mi"], "1Gi"),
        (["0", "1Gi"], "1Gi"),  # the first term that is not zero gives the format
        (["1G", "1Gi"], "2073741824"),
        (["500", "500"], "1k"),
        (["1e3", "1e3"], "2e3"),
        (["0.1m"], "100u"),
        ([], "0"),
    ],
)
def test_quantities_add_up_and_print_as_kubernetes_prints_them(
    terms: list[str], printed: str
) -> None:
    assert str(total([parse(t) for t in terms])) == printed


def test_a_pods_requests_count_init_containers_at_their_largest_need_and_sidecars_always() -> None:
    spec = {
        "containers": [{"resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "1"}}}],
        "initContainers": [
            {"restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            {"resources": {"requests": {"cpu": "500m"}}},
        ],
        "overhead": {"cpu": "10m", "memory": "1Mi"},
    }
    requests = pod_totals(spec, "requests")
    # the sidecar runs with the containers (300m) and with the second init container (600m)
    assert {k: str(v) for k, v in requests.items()} == {"cpu": "610m", "memory": "1Mi"}
    assert {k: str(v) for k, v in pod_totals(spec, "limits").items()} == {"cpu": "1010m"}


def _pod(name: str, **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def test_a_quota_is_served_with_hard_and_what_is_used(sandbox: KubeSandbox) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "counts", "namespace": "default"},
        "spec": {
            "hard": {
                "pods": "4",
                "count/pods": "4",
                "secrets": "2",
                "services.loadbalancers": "1",
                "count/leases.coordination.k8s.io": "1",
                "example.com/widgets": "1",
            }
        },
    }
    assert raw(sandbox, "POST", QUOTAS, quota)[0] == 201
    sandbox.upsert({**quota, "status": {"used": {"example.com/widgets": "1"}}})
    sandbox.upsert(_pod("running"))
    finished = _pod("finished")
    sandbox.upsert({**finished, "status": {"phase": "Succeeded"}})
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "front", "namespace": "default"},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]},
        }
    )
    status, served = raw(sandbox, "GET", f"{QUOTAS}/counts")
    assert status == 200
    assert served["status"] == {
        "hard": quota["spec"]["hard"],
        "used": {
            "pods": "1",  # a finished pod no longer counts
            "count/pods": "1",
            "secrets": "0",
            "services.loadbalancers": "1",
            "count/leases.coordination.k8s.io": "0",
            "example.com/widgets": "1",  # nothing counts it: what status said stays
        },
    }
    listed = raw(sandbox, "GET", QUOTAS)[1]["items"]
    assert listed[0]["status"] == served["status"]
    assert raw(sandbox, "GET", f"{QUOTAS}/counts/status")[1]["status"] == served["status"]
    # What is stored is untouched: the status is worked out when served.
    assert sandbox.get("ResourceQuota", "counts", "default")["status"] == {
        "used": {"example.com/widgets": "1"}
    }


def test_a_priority_class_scope_counts_only_pods_of_that_class(sandbox: KubeSandbox) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "urgent", "namespace": "default"},
        "spec": {
            "hard": {"pods": "2", "requests.memory": "1Gi"},
            "scopeSelector": {
                "matchExpressions": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["urgent"]}
                ]
            },
        },
    }
    assert raw(sandbox, "POST", QUOTAS, quota)[0] == 201
    asking = [{"name": "c", "image": "busybox", "resources": {"requests": {"memory": "100Mi"}}}]
    sandbox.upsert(_pod("urgent", priorityClassName="urgent", containers=asking))
    sandbox.upsert(_pod("ordinary", containers=asking))
    used = raw(sandbox, "GET", f"{QUOTAS}/urgent")[1]["status"]["used"]
    assert used == {"pods": "1", "requests.memory": "100Mi"}


def test_watch_events_carry_the_status_too(sandbox: KubeSandbox) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "pods", "namespace": "default"},
        "spec": {"hard": {"pods": "3"}},
    }
    assert raw(sandbox, "POST", QUOTAS, quota)[0] == 201
    sandbox.upsert(_pod("one"))
    response = urllib3.request(
        "GET", f"{sandbox.url}{QUOTAS}?watch=1&timeoutSeconds=1", timeout=10, retries=False
    )
    events = [json.loads(line) for line in response.data.splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["ADDED"]
    assert events[0]["object"]["status"] == {"hard": {"pods": "3"}, "used": {"pods": "1"}}
