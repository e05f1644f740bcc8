"""An upgrade campaign whose tenant sync is refused pauses and keeps the refusal's words."""

from provisioning.jobs import campaigns
from tenants import services
from tenants.choices import CampaignState, TargetState
from tenants.models import EnvironmentTier, Tenant


def test_a_campaign_sync_refused_on_its_input_stores_the_plain_message(
    gitops_world, newer_templates
):
    campaign = services.create_campaign(
        actor=gitops_world["admin"],
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
