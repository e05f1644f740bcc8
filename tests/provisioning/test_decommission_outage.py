"""A decommission that meets a git outage (issue #49): the run marks the namespace
decommissioning before its GitOps step, so every later render of the request (the resume
after the wait, an admin's Retry, the batch commit writer) must still find it. Against the
Kubernetes API stand-in and a git daemon on loopback that stops and starts again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from provisioning import reconcile
from provisioning.records import outcomes
from tenants import services
from tenants.choices import NamespaceState, RequestKind, RequestState
from tenants.errors import InvalidInput
from tenants.models import Namespace, Request
from tests.support.api import api
from tests.support.cluster import shared_stand_in
from tests.support.gitops_world import gitops_step
from tests.support.gitserver import GitDaemon, files_on, init_bare
from tests.support.prov_world import demo_world_on
from tests.support.workflow import approve_if_needed, approved, ask_for_project, converge

# A git daemon of the test's own: make test-fast leaves these out.
pytestmark = pytest.mark.processes

NAMESPACE = "payments-shop-dev"


@pytest.fixture
def daemon(tmp_path):
    repos = tmp_path / "repos"
    repos.mkdir()
    init_bare(repos / "payments.git")
    with GitDaemon(repos) as running:
        yield running


@pytest.fixture
def world(db, daemon, settings):
    """The demo on the stand-in, payments' repository on `daemon`, with shop's dev namespace
    provisioned (on the cluster and in the repository)."""
    settings.BERTH_GIT_MAX_ATTEMPTS = 2
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    settings.BERTH_GIT_TIMEOUT_SECONDS = 10.0
    sandbox = shared_stand_in(termination_seconds=0.2)
    world = demo_world_on(sandbox, daemon)
    created = converge(approved(world))
    assert created.state == RequestState.READY, created.status_message
    assert on_cluster(sandbox, NAMESPACE)
    assert "apps/shop/dev/application.yaml" in files_on(world["bare"])
    return {**world, "sandbox": sandbox, "daemon": daemon, "created": created}


def on_cluster(sandbox, name: str) -> bool:
    return sandbox.get("Namespace", name) is not None


def decommission_meeting_an_outage(world) -> Request:
    """Shop's dev namespace decommissioned while its repository does not answer: the run
    starts (the namespace is marked decommissioning), its GitOps step meets the outage."""
    removal = approved(world, kind="decommission", namespace=NAMESPACE, reason="moved on")
    world["daemon"].stop()
    return converge(removal)


def its_time(tenancy_request: Request) -> None:
    """What the outage's 30 s come to: the wait's next try is due now."""
    Request.objects.filter(pk=tenancy_request.pk).update(
        next_try_at=timezone.now() - timedelta(seconds=1),
        waiting_since=timezone.now() - timedelta(seconds=30),
        lease_expires_at=None,
    )


def assert_decommissioned(world, removal: Request) -> None:
    assert removal.state == RequestState.READY, removal.status_message
    assert gitops_step(removal)["outcome"] == "committed"
    assert (
        not Namespace.objects.filter(name=NAMESPACE)
        .exclude(state=NamespaceState.DECOMMISSIONED)
        .exists()
    )
    world["created"].refresh_from_db()
    assert world["created"].state == RequestState.DECOMMISSIONED
    assert not on_cluster(world["sandbox"], NAMESPACE)
    assert not [path for path in files_on(world["bare"]) if path.startswith("apps/shop/dev/")]


def test_a_decommission_that_meets_a_git_outage_of_30_s_finishes(world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    removal = decommission_meeting_an_outage(world)

    assert removal.state == RequestState.PROVISIONING  # waiting, not failed
    assert removal.wait_reason.startswith("repository unreachable")
    assert removal.next_try_at is not None
    assert Namespace.objects.get(name=NAMESPACE).state == NamespaceState.DECOMMISSIONING

    its_time(removal)
    removal = converge(removal)  # still down: it waits again, it does not fail
    assert removal.state == RequestState.PROVISIONING, removal.status_message
    assert removal.wait_reason.startswith("repository unreachable")

    world["daemon"].start()  # back, 30 s after it went
    its_time(removal)
    removal = converge(removal)

    assert removal.runs.count() == 1  # resumed by itself, nobody pressed Retry
    assert_decommissioned(world, removal)


def test_a_decommission_retried_after_a_git_failure_finishes(world):
    # The test settings' outage deadline is 0: the first outage fails the request.
    removal = decommission_meeting_an_outage(world)
    assert removal.state == RequestState.FAILED
    assert "repository unreachable" in removal.status_message
    world["daemon"].start()

    answer = api(world["admin"]).post(f"/api/v1/requests/{removal.pk}/retry/")
    assert answer.status_code == 200, answer.content  # not 409
    assert answer.json()["state"] == "provisioning"
    removal = converge(removal)

    assert removal.runs.count() == 2
    assert_decommissioned(world, removal)


def test_a_project_decommission_that_meets_a_git_outage_finishes(world, settings, monkeypatch):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    made = approve_if_needed(
        ask_for_project(
            world["tenant"],
            world["developer"],
            app="cart",
            engine="argocd",
            tiers=("dev", "staging"),
        ),
        approver=world["admin"],
    )
    assert converge(made).state == RequestState.READY
    going = ["payments-cart-dev", "payments-cart-staging"]
    removal = approve_if_needed(
        services.submit_request(
            tenant=world["tenant"],
            kind=RequestKind.PROJECT_DECOMMISSION,
            payload={"project": "cart", "cluster": "sandbox", "reason": "retired"},
            requester=world["developer"],
        ),
        approver=world["admin"],
    )
    # The outage begins as the run marks the namespaces decommissioning (an admin's approval
    # is bound to the repository's diff: it was read as the run started).
    marking = outcomes.mark_namespaces_decommissioning

    def outage_then_mark(**given):
        world["daemon"].stop()
        return marking(**given)

    monkeypatch.setattr(outcomes, "mark_namespaces_decommissioning", outage_then_mark)
    removal = converge(removal)
    assert removal.state == RequestState.PROVISIONING, removal.status_message
    assert removal.wait_reason.startswith("repository unreachable")
    assert set(Namespace.objects.filter(name__in=going).values_list("state", flat=True)) == {
        NamespaceState.DECOMMISSIONING
    }

    monkeypatch.setattr(outcomes, "mark_namespaces_decommissioning", marking)
    world["daemon"].start()
    its_time(removal)
    removal = converge(removal)

    assert removal.state == RequestState.READY, removal.status_message
    assert set(Namespace.objects.filter(name__in=going).values_list("state", flat=True)) == {
        NamespaceState.DECOMMISSIONED
    }
    assert not any(on_cluster(world["sandbox"], name) for name in going)
    assert not [path for path in files_on(world["bare"]) if path.startswith("apps/cart/")]
    assert on_cluster(world["sandbox"], NAMESPACE)  # the rest stays


def test_a_second_decommission_while_one_waits_is_refused_saying_why(world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    decommission_meeting_an_outage(world)

    with pytest.raises(InvalidInput) as refused:  # a 400 naming the field, not a crash
        services.submit_request(
            tenant=world["tenant"],
            kind="decommission",
            payload={"namespace": NAMESPACE, "reason": "again"},
            requester=world["developer"],
        )
    assert refused.value.field_errors == {
        "namespace": [f"{NAMESPACE!r} is not an active namespace of this tenant."]
    }
    assert Request.objects.filter(kind="decommission").count() == 1


def test_the_batch_commit_writer_renders_a_waiting_decommission(world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    removal = decommission_meeting_an_outage(world)
    world["daemon"].start()

    written = reconcile.write_gitops(request_id=removal.pk)

    assert written.outcome == "committed"
    assert not [path for path in files_on(world["bare"]) if path.startswith("apps/shop/dev/")]
