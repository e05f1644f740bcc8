"""Where an upgrade campaign meets merge-request mode: its namespaces' pins move, their
clusters wait for the repository change's merge (no sweep, repair or watcher applies the
new revision before it), and a pull request the reviewer closes returns every namespace
to the revision it ran, in the records, on the cluster and in the repository, shown as
returned on the campaign and in the audit log."""

from __future__ import annotations

import pytest

from provisioning import jobs
from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants import services
from tenants.choices import CampaignState, RequestState, TargetState
from tenants.models import (
    AuditEvent,
    CampaignCommit,
    CampaignTarget,
    EnvironmentTier,
    Namespace,
    Request,
)
from tests.support.cluster import as_admin
from tests.support.gitops_loop import project, work
from tests.support.gitserver import files_on
from tests.support.jobs_campaigns import annotated, newer_applications, roll

from .conftest import REPO
from .test_mode_seams import merged

PATH = "apps/shop/dev/application.yaml"


def memory(sandbox) -> str:
    limits = as_admin(
        sandbox, "GET", "/api/v1/namespaces/payments-shop-dev/limitranges/berth-limits"
    )
    return limits["spec"]["limits"][0]["default"]["memory"]


@pytest.fixture
def rolling(forge_world, sandbox, monkeypatch):
    """A dev namespace made through a merged pull request, then a campaign that changes
    both its cluster objects (a tier edit) and its repository files (newer templates),
    rolled once: its pull request is open."""
    (made,) = [project(forge_world, "shop", "argocd", "dev")]
    work()
    merged(forge_world, Request.objects.get(pk=made.pk), 1)
    before = memory(sandbox)
    EnvironmentTier.objects.filter(slug="dev").update(container_default_memory_mib=768)
    with newer_applications(monkeypatch, annotated):
        campaign = services.create_campaign(
            actor=forge_world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="Dev containers default to 768Mi.",
        )
        assert roll(campaign) == CampaignState.ROLLING
        (filed,) = work()
        yield {"campaign": campaign, "sync": filed, "before": before}


def test_the_cluster_waits_for_the_merge_while_the_pin_has_moved(rolling, sandbox):
    campaign, sync = rolling["campaign"], rolling["sync"]
    target = CampaignTarget.objects.get(campaign=campaign)
    namespace = Namespace.objects.get(name="payments-shop-dev")

    assert target.state == TargetState.AWAITING_MERGE
    assert namespace.tier_revision.number == 2  # what is wanted, once merged
    assert sync.state == RequestState.AWAITING_MERGE
    assert memory(sandbox) == rolling["before"] != "768Mi"
    # A sweep of the namespace does not jump the gate, whatever its records want.
    jobs.sweep_namespace(namespace)
    assert memory(sandbox) == rolling["before"]
    campaign.refresh_from_db()
    assert campaign.status_message.startswith("Waiting for 1 repository change(s)")
    assert "1 namespace(s) change on the cluster with theirs" in campaign.status_message


def test_a_closed_pull_request_returns_records_cluster_and_repository_to_revision_1(
    rolling, forge_world, sandbox, django_capture_on_commit_callbacks
):
    campaign, sync = rolling["campaign"], rolling["sync"]
    forge_world["forge"].close_as_reviewer(REPO, 2, "rita")

    with django_capture_on_commit_callbacks(execute=True):
        assert poll_pull_requests() == {sync.pk: "closed"}

    namespace = Namespace.objects.get(name="payments-shop-dev")
    assert namespace.tier_revision.number == 1
    assert memory(sandbox) == rolling["before"]
    assert "berth.dev/new" not in files_on(forge_world["forge"].repo(REPO).git.path)[PATH]
    assert CampaignTarget.objects.get(campaign=campaign).state == TargetState.RETURNED
    assert CampaignCommit.objects.get(campaign=campaign).state == TargetState.RETURNED
    (event,) = AuditEvent.objects.filter(action="campaign.returned", object_id=str(campaign.pk))
    assert event.after["namespaces"] == ["payments-shop-dev"]
    assert event.after["request"] == sync.pk
    # The campaign ends, saying what came back.
    assert roll(campaign) == CampaignState.DONE
    campaign.refresh_from_db()
    assert "1 returned" in campaign.status_message
    # Nothing is left for a sweep to apply: records and cluster agree.
    assert jobs.sweep_namespace(namespace) == []


def test_a_merged_pull_request_moves_cluster_and_repository_together(
    rolling, forge_world, sandbox, django_capture_on_commit_callbacks
):
    campaign, sync = rolling["campaign"], rolling["sync"]
    with django_capture_on_commit_callbacks(execute=True):
        merged(forge_world, sync, 2)

    assert memory(sandbox) == "768Mi"
    assert "berth.dev/new" in files_on(forge_world["forge"].repo(REPO).git.path)[PATH]
    assert CampaignTarget.objects.get(campaign=campaign).state == TargetState.APPLIED
    assert roll(campaign) == CampaignState.DONE
