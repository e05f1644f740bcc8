"""Upgrade campaigns for a new Berth whose templates write different GitOps files, against
the Kubernetes API stand-in and the tenant's git server: the new files reach the tenant's
repository as a commit filed after the namespaces are upgraded, and a refused commit pauses
the campaign saying why."""

from __future__ import annotations

from tenants import services
from tenants.choices import CampaignState, TargetState
from tenants.models import EnvironmentTier, Namespace
from tests.support.gitops_loop import work
from tests.support.jobs_campaigns import newer_applications, roll


def test_new_templates_reach_the_tenants_repository_as_a_commit_after_the_namespaces(
    gitops_world, monkeypatch, client
):
    from tenants.choices import RequestKind, RequestState
    from tenants.models import Request
    from tests.support.gitops_loop import project
    from tests.support.gitserver import files_on

    project(gitops_world, "shop", "argocd", "dev")
    work()
    shop = Namespace.objects.get(name="payments-shop-dev")
    assert shop.bundle_revision.number == 1
    path = "apps/shop/dev/application.yaml"
    assert "ServerSideApply=true" not in files_on(gitops_world["bare"])[path]

    def server_side(application):  # what a newer Berth writes: Argo CD applies server-side
        application["spec"]["syncPolicy"]["syncOptions"].append("ServerSideApply=true")

    with newer_applications(monkeypatch, server_side):
        campaign = services.create_campaign(
            actor=gitops_world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="Argo CD applies server-side.",
        )
        assert campaign.bundle_revision.number == 2
        assert campaign.targets.count() == 0  # the cluster objects are as they were
        [commit] = campaign.commits.all()
        assert (commit.tenant.slug, commit.cluster.name, commit.paths) == (
            "payments",
            "sandbox",
            [path],
        )
        assert "+    - ServerSideApply=true" in commit.diff
        shop.refresh_from_db()
        assert shop.bundle_revision.number == 1  # its files are not written yet

        client.force_login(gitops_world["admin"])
        page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
        assert "1 repository" in page and "ServerSideApply=true" in page

        # Filed, not yet written: the campaign waits for it.
        assert roll(campaign) == CampaignState.ROLLING
        campaign.refresh_from_db()
        assert "Waiting for 1 repository change(s)" in campaign.status_message
        commit.refresh_from_db()
        assert commit.state == TargetState.FILED
        filed = commit.request
        assert (filed.kind, filed.state) == (RequestKind.TENANT_SYNC, RequestState.APPROVED)
        assert f"Upgrade campaign #{campaign.pk}" in filed.payload["reason"]
        shop.refresh_from_db()
        assert shop.bundle_revision.number == 2
        work()
        assert Request.objects.get(pk=filed.pk).state == RequestState.READY
        assert "ServerSideApply=true" in files_on(gitops_world["bare"])[path]
        assert roll(campaign) == CampaignState.DONE  # done once the repository holds it


def test_a_refused_commit_pauses_the_campaign_and_says_why(gitops_world, newer_templates):
    from tenants.models import ApprovalRule

    campaign = services.create_campaign(
        actor=gitops_world["admin"],
        tier=EnvironmentTier.objects.get(slug="dev"),
        reason="New annotation.",
    )
    ApprovalRule.objects.create(
        name="no-syncs",
        position=0,
        outcome="deny",
        condition='request.kind == "tenant_sync"',
        description="Frozen.",
    )
    assert roll(campaign) == CampaignState.PAUSED
    campaign.refresh_from_db()
    commit = campaign.commits.get()
    assert commit.state == TargetState.FAILED and "no-syncs" in commit.error
    assert "payments's files on sandbox were not filed" in campaign.status_message
