"""The demo world the provisioning tests start from: the demo seeded onto a Kubernetes API
stand-in (tests/support/cluster.py), and the people and tenant they act with and on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesandbox import KubeSandbox
from tenants.models import Tenant, User
from tests.support.cluster import seed_demo
from tests.support.gitserver import GitDaemon, LocalRepositories, init_bare


def demo_people() -> dict[str, Any]:
    """Of the seeded demo: the payments tenant, its developer dev and the platform admin pat."""
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
    }


def demo_world(sandbox: KubeSandbox, **tenant_fields: Any) -> dict[str, Any]:
    """The demo on `sandbox`, its people, the payments tenant with `tenant_fields` saved."""
    seed_demo(sandbox)
    world = demo_people()
    if tenant_fields:
        for field, value in tenant_fields.items():
            setattr(world["tenant"], field, value)
        world["tenant"].save()
    return world


def demo_world_on(
    sandbox: KubeSandbox, daemon: GitDaemon | LocalRepositories, **tenant_fields: Any
) -> dict[str, Any]:
    """The demo world with the payments tenant's repository on `daemon` (its `bare` too)."""
    world = demo_world(sandbox, gitops_repo_url=daemon.url("payments.git"), **tenant_fields)
    return {**world, "bare": daemon.base / "payments.git"}


def demo_world_with_repository(
    sandbox: KubeSandbox, root: Path, **tenant_fields: Any
) -> dict[str, Any]:
    """The demo world with a fresh payments repository, a local bare one under `root`/repos."""
    repos = root / "repos"
    repos.mkdir()
    init_bare(repos / "payments.git")
    return demo_world_on(sandbox, LocalRepositories(repos), **tenant_fields)
