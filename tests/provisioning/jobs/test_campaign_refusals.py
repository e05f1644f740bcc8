"""An upgrade campaign whose tenant sync is refused pauses and keeps the refusal's words."""

from provisioning.jobs import campaigns
from tenants import services
from tenants.choices import CampaignState, TargetState
from tenants.models import EnvironmentTier, Tenant
from tests.support.gitops_loop import project, work


def test_a_campaign_sync_refused_on_its_input_stores_the_plain_message(world, monkeypatch):
    from provisioning import versions
    from provisioning.gitops_plan import files as gitops_files

    project(world, "shop", "argocd", "dev")
    work()
    real = gitops_files.application
    monkeypatch.setattr(
        gitops_files,
        "application",
        lambda inputs, ns: {
            **real(inputs, ns),
            "metadata": {**real(inputs, ns)["metadata"], "annotations": {"berth.dev/new": "yes"}},
        },
    )
    versions.bundle_digest.cache_clear()
    try:
        campaign = services.create_campaign(
            actor=world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="New annotation.",
        )
        Tenant.objects.filter(slug="payments").update(
            repository_check_ok=False, repository_check_message="Push refused."
        )
        assert campaigns.roll(campaign.pk) == CampaignState.PAUSED
        commit = campaign.commits.get()
        assert commit.state == TargetState.FAILED
        assert commit.error.startswith("payments's GitOps repository failed its check: Push")
    finally:
        monkeypatch.undo()
        versions.bundle_digest.cache_clear()
