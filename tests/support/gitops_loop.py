"""The GitOps loop's world, shared by the tests that provision through it: the Kubernetes API
stand-in (Berth as its ServiceAccount with the chart's RBAC, the upstream CRDs), the demo
seeded onto it, and the payments tenant's repository on a git server over HTTP wanting the
tenant's token (Flux reads https:// and SSH only; the suite's git is plain HTTP on loopback).
One stand-in and one git server per test process; the world is built once per process and
given back to each test, its repository as it was (tests/support/snapshots.py). The
fixtures are registered by the conftest.py of each folder that uses them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kubesandbox import KubeSandbox
from portal.gitserver import GitHttpServer
from provisioning import reconcile
from tenants import services
from tenants.choices import RequestKind, RequestState
from tenants.models import Cluster, EnvironmentTier, Request, Tenant, User
from tenants.selectors import review
from tests.support.cluster import seed_demo, shared_stand_in
from tests.support.gitserver import init_bare
from tests.support.snapshots import built_once
from tests.support.workflow import approve_if_needed

TOKEN = "glpat-loop-Secr3t-token"


@pytest.fixture
def sandbox() -> KubeSandbox:
    """The loop's stand-in: one per test process, a fresh cluster for each test."""
    return shared_stand_in(termination_seconds=0.05)


@pytest.fixture(scope="session")
def loop_repositories(tmp_path_factory) -> Path:
    """Where the loop's git server keeps its repositories, and its worlds what they built."""
    return tmp_path_factory.mktemp("loop-repositories")


@pytest.fixture(scope="session")
def loop_server(loop_repositories) -> Iterator[GitHttpServer]:
    """One git server over HTTP for the test process, wanting the tenant's token."""
    served = loop_repositories / "served"
    served.mkdir()
    with GitHttpServer(served, token=TOKEN) as running:
        yield running


@pytest.fixture
def server(loop_server) -> GitHttpServer:
    """The loop's git server, what it was asked before this test forgotten."""
    loop_server.seen.clear()
    return loop_server


@pytest.fixture
def gitops_world(db, sandbox, server, loop_repositories, settings) -> dict:
    """The demo on the loop's stand-in, payments' repository fresh on the loop's server."""
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    bare = server.root / "payments.git"
    url = server.url("payments.git")

    def build() -> None:
        shutil.rmtree(bare, ignore_errors=True)
        init_bare(bare)
        seed_demo(sandbox)
        tenant = Tenant.objects.get(slug="payments")
        tenant.gitops_repo_url = url
        tenant.gitops_credentials = f"payments-bot:{TOKEN}"
        tenant.save()

    built_once(
        ("gitops-loop", sandbox.url, url),
        build,
        sandbox=sandbox,
        repositories=[bare],
        keep=loop_repositories / "kept-world",
    )
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "owner": User.objects.get(username="olivia"),
        "admin": User.objects.get(username="pat"),
        "bare": bare,
        "cluster": Cluster.objects.get(name="sandbox"),
        "kept": loop_repositories,
    }


def built_on_the_loop(gitops_world, sandbox, name: str, build: Callable[[], object]) -> None:
    """`build` run on `gitops_world` once per test process, its rows, the stand-in's objects
    and payments' repository given back to each later test that asks for `name`."""
    built_once(
        (name, sandbox.url, gitops_world["tenant"].gitops_repo_url),
        build,
        sandbox=sandbox,
        repositories=[gitops_world["bare"]],
        keep=gitops_world["kept"] / f"kept-{name}",
    )


@pytest.fixture
def provisioned(gitops_world, sandbox) -> dict:
    """The world with three projects provisioned: on Argo CD, Argo CD + Kargo and Flux;
    provisioned once per test process and given back to each test."""
    built_on_the_loop(
        gitops_world, sandbox, "provisioned", lambda: provision_three_projects(gitops_world)
    )
    return gitops_world


@pytest.fixture
def prod_change(gitops_world):
    """Two prod namespaces provisioned, then the prod tier's definition changed."""
    for app in ("shop", "cart"):
        approved_namespace(gitops_world, app, "prod")
    work()
    EnvironmentTier.objects.filter(slug="prod").update(container_default_memory_mib=1024)
    return gitops_world


def work() -> list[Request]:
    """What the worker does with every approved request, oldest first."""
    done = []
    for pk in (
        Request.objects.filter(state=RequestState.APPROVED)
        .order_by("pk")
        .values_list("pk", flat=True)
    ):
        reconcile.converge(request_id=pk, worker="loop-test")
        done.append(Request.objects.get(pk=pk))
    return done


def submit(gitops_world, kind: str, **payload) -> Request:
    return services.submit_request(
        tenant=gitops_world["tenant"], kind=kind, payload=payload, requester=gitops_world["owner"]
    )


def ask_for_web(gitops_world) -> Request:
    """payments-web-dev asked for on the sandbox, approved by the default rules."""
    made = submit(
        gitops_world,
        "namespace",
        app="web",
        tier="dev",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    assert made.state == RequestState.APPROVED
    return made


def wake(tenancy_request: Request) -> None:
    """What the sweep does for a waiting request once its wait is over."""
    Request.objects.filter(pk=tenancy_request.pk).update(lease_owner="", lease_expires_at=None)


def approved_namespace(gitops_world, app: str, tier: str) -> Request:
    """A namespace of 500m and 512Mi on the sandbox, approved by a platform admin where the
    policy wants one."""
    submitted = submit(
        gitops_world, "namespace", app=app, tier=tier, cluster="sandbox", cpu="500m", memory="512Mi"
    )
    return approve_if_needed(submitted, approver=gitops_world["admin"])


def project(
    gitops_world,
    name: str,
    engine_name: str,
    *tiers: str,
    cluster: str = "sandbox",
    approve: bool = True,
) -> Request:
    submitted = submit(
        gitops_world,
        RequestKind.PROJECT,
        app=name,
        engine=engine_name,
        cluster=cluster,
        tiers=list(tiers or ("dev",)),
    )
    return approve_if_needed(submitted, approver=gitops_world["admin"]) if approve else submitted


def decide(gitops_world, tenancy_request: Request) -> Request:
    """A platform admin approves the plan and GitOps change as shown now."""
    return services.approve_request(
        request_id=tenancy_request.pk,
        approver=gitops_world["admin"],
        plan_digest=review(tenancy_request).digest,
    )


def decided_and_done(gitops_world, tenancy_request: Request) -> Request:
    """Decided by a platform admin as shown now, then done by the worker: Ready."""
    decide(gitops_world, tenancy_request)
    (done,) = work()
    assert done.state == RequestState.READY, done.status_message
    return done


def provision_three_projects(gitops_world) -> dict[str, Request]:
    made = {
        "shop": project(gitops_world, "shop", "argocd", "dev"),
        "cart": project(gitops_world, "cart", "argocd_kargo", "dev", "staging"),
        "feed": project(gitops_world, "feed", "flux", "dev"),
    }
    work()
    for name, tenancy_request in made.items():
        tenancy_request.refresh_from_db()
        assert tenancy_request.state == RequestState.READY, (name, tenancy_request.status_message)
    return made
