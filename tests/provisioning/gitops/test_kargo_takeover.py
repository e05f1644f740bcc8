"""Regression: a team member could take over the project's Kargo namespace.

Once, `POST /api/v1/environments/` with `env_slug: "kargo"` named an ephemeral environment
`payments-shop-kargo`: the namespace Berth made for the project's Kargo Project. Policy
approved it, the plan applied that Namespace again and granted the member
`berth-tenant-edit` in it, and ending the environment deleted it (ProjectConfig gone, Kargo
Project orphaned, the repository's Kargo files pointing at nothing). Environment rules could
name it too.

Here the whole way, over the REST API with API tokens, against the Kubernetes API stand-in
(Berth as its ServiceAccount, with the chart's RBAC) and a real git server: the owner asks
for the project, an admin approves its plan, the worker provisions it; then every way to the
Kargo namespace is refused, and an environment that does end leaves it whole.
"""

from __future__ import annotations

import pytest

from tenants.choices import NamePurpose, RequestState
from tenants.models import NamespaceClaim, Request, User
from tests.support.api import api, assert_problem
from tests.support.gitops_loop import work
from tests.support.gitserver import files_on
from tests.support.prov_world import demo_world_with_repository

KARGO_NS = "payments-shop-kargo"


# `sandbox` is the folder's stand-in (tests/provisioning/conftest.py).
@pytest.fixture
def repository_world(db, sandbox, tmp_path, settings):
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    return demo_world_with_repository(sandbox, tmp_path)


def kargo_state(sandbox, bare) -> dict:
    """What makes the project's Kargo side work: the namespace, the Kargo Project and its
    ProjectConfig on the cluster, the Kargo files in the repository."""
    return {
        "namespace": (sandbox.get("Namespace", KARGO_NS) or {}).get("metadata", {}).get("uid"),
        "project": (sandbox.get("Project", KARGO_NS, api_version="kargo.akuity.io/v1alpha1") or {})
        .get("metadata", {})
        .get("uid"),
        "config": (
            sandbox.get("ProjectConfig", KARGO_NS, KARGO_NS, api_version="kargo.akuity.io/v1alpha1")
            or {}
        )
        .get("metadata", {})
        .get("uid"),
        "files": sorted(path for path in files_on(bare) if "/kargo/" in path),
    }


def test_no_way_to_the_projects_kargo_namespace(repository_world, sandbox):
    # The demo people (tenants/demo.py): olivia owns payments, dev is a member, pat an admin.
    owner, member, admin = (
        api(User.objects.get(username=name)) for name in ("olivia", "dev", "pat")
    )

    # The owner asks for the project on Argo CD + Kargo; a platform admin approves its plan.
    asked = owner.post(
        "/api/v1/requests/",
        {
            "tenant": "payments",
            "kind": "project",
            "payload": {
                "app": "shop",
                "engine": "argocd_kargo",
                "cluster": "sandbox",
                "tiers": ["dev", "staging"],
            },
        },
        format="json",
    )
    assert asked.status_code == 201, asked.content
    project_request = asked.json()
    if project_request["state"] == "submitted":
        approved = admin.post(
            f"/api/v1/requests/{project_request['id']}/approve/",
            {"plan_digest": project_request["plan"]["digest"]},
            format="json",
        )
        assert approved.status_code == 200, approved.content
    (provisioned,) = work()
    assert provisioned.state == RequestState.READY, provisioned.status_message
    before = kargo_state(sandbox, repository_world["bare"])
    assert all(before.values()), before  # the Kargo side is there to be taken

    # 1. An environment named "kargo": refused, naming what the name is.
    taken = member.post(
        "/api/v1/environments/",
        {"tenant": "payments", "project": "shop", "env_slug": "kargo", "branch": "feature/kargo"},
        format="json",
    )
    problem = assert_problem(taken, 400)
    assert f"{KARGO_NS} is the project's Kargo namespace" in str(problem)
    assert not Request.objects.filter(kind="ephemeral").exists()  # nothing half-made

    # 2. An environment rule naming it, literally or by template: refused, nothing saved.
    for template in (KARGO_NS, "$TENANT-$PROJECT-kargo"):
        ruled = owner.put(
            "/api/v1/tenants/payments/environment-rules/",
            {"rules": [{"if": "", "namespace": template}]},
            format="json",
        )
        assert "ends with -kargo" in str(assert_problem(ruled, 400))
    assert owner.get("/api/v1/tenants/payments/environment-rules/").json()["rules"] == []

    # 3. An environment that does exist, then ends: its own namespace goes, Kargo's stays.
    created = member.post(
        "/api/v1/environments/",
        {
            "tenant": "payments",
            "project": "shop",
            "env_slug": "pr-7",
            "branch": "feature/pr-7",
            "mr_id": "7",
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    (environment_request,) = work()
    assert environment_request.state == RequestState.READY, environment_request.status_message
    environment_ns = environment_request.payload["namespace"]
    assert environment_ns != KARGO_NS and sandbox.get("Namespace", environment_ns)

    ended = member.post(f"/api/v1/environments/{created.json()['id']}/end/", format="json")
    assert ended.status_code == 202, ended.content  # accepted: the worker ends it
    work()

    assert sandbox.get("Namespace", environment_ns) is None
    assert (
        kargo_state(sandbox, repository_world["bare"]) == before
    )  # the very same objects, untouched
    claim = NamespaceClaim.objects.get(cluster__name="sandbox", name=KARGO_NS)
    assert (claim.purpose, claim.app) == (NamePurpose.KARGO, "shop")
