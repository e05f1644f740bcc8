"""The GitOps writer's world, shared by its tests in tests/provisioning/gitops/: the demo
seeded onto the Kubernetes API stand-in and the payments tenant's repository on a git daemon
over loopback (the fixtures, `writer_world` among them, are in that folder's conftest.py).
Here: submitting and converging requests, reading a run's GitOps step and Berth's commits,
and many requests of one tenant waiting for the writer at once.
"""

from __future__ import annotations

from pathlib import Path

from provisioning import jobs
from tenants import demo, services
from tenants.choices import Decision, NamespaceState, RequestKind, RequestState
from tenants.models import Approval, Cluster, EnvironmentTier, Namespace, Request, Tenant, User
from tests.support.gitserver import commits_on, files_on
from tests.support.workflow import approve_if_needed

WORKER = "gitops-test"
TOKEN = "glpat-Secr3tT0kenValue-9f8e7d"


def approved(world, kind="namespace", **payload) -> Request:
    payload = payload or {
        "app": "shop",
        "tier": "dev",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "2Gi",
    }
    submitted = services.submit_request(
        tenant=world["tenant"], kind=kind, payload=payload, requester=world["developer"]
    )
    return approve_if_needed(submitted, approver=world["admin"])


def converge(tenancy_request: Request) -> Request:
    jobs.converge(request_id=tenancy_request.pk, worker=WORKER)
    tenancy_request.refresh_from_db()
    return tenancy_request


def gitops_step(tenancy_request: Request) -> dict:
    """The run's GitOps step: its last when it adds, its first when it removes."""
    (step,) = [
        step
        for step in tenancy_request.runs.order_by("-pk").first().steps
        if step["action"] == "commit"
    ]
    return step


def berth_commits(bare: Path) -> list[dict]:
    return [c for c in commits_on(bare) if c["request"]]


def many_requests(count: int) -> list[int]:
    """`count` namespace requests of one tenant, each its own app, as provisioning leaves
    them just before the GitOps step (namespaces pending, approved by pat)."""
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    tenant = Tenant.objects.get(slug="payments")
    dev, admin = User.objects.get(username="dev"), User.objects.get(username="pat")
    tier, cluster = EnvironmentTier.objects.get(slug="dev"), Cluster.objects.get(name="sandbox")
    ids = []
    for number in range(count):
        app = f"app{number:03d}"
        tenancy_request = Request.objects.create(
            tenant=tenant,
            kind=RequestKind.NAMESPACE,
            requester=dev,
            state=RequestState.PROVISIONING,
            payload={
                "app": app,
                "tier": "dev",
                "cluster": "sandbox",
                "cpu_millis": 100,
                "memory_mib": 128,
                "storage_gib": 0,
            },
        )
        Approval.objects.create(
            request=tenancy_request, approver=admin, decision=Decision.APPROVE, plan_digest="bench"
        )
        Namespace.objects.create(
            name=f"payments-{app}-dev",
            tenant=tenant,
            tier=tier,
            cluster=cluster,
            cpu_millis=100,
            memory_mib=128,
            request=tenancy_request,
            state=NamespaceState.PENDING,
        )
        ids.append(tenancy_request.pk)
    return ids


def assert_all_arrived(bare: Path, ids: list[int]) -> None:
    commits = berth_commits(bare)
    assert len(commits) == len(ids)
    assert sorted(int(c["request"]) for c in commits) == sorted(ids)  # each exactly once
    applications = [p for p in files_on(bare) if p.endswith("/dev/application.yaml")]
    assert len(applications) == len(ids)
