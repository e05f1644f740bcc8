"""A namespace changes only through a decision: every path that works out what a live
namespace should hold (drift repair, the truth table and its Repair, tenant_sync, a quota
change) renders the tier definition the namespace runs, so an edited tier reaches it only
through an upgrade campaign, and a campaign's rollback stays rolled back."""

from __future__ import annotations

import pytest

from provisioning import tasks
from provisioning.jobs import campaigns as engine_campaigns
from tenants import provisioner, selectors, services
from tenants.choices import AllocationChange, CampaignState, RequestKind, RequestState
from tenants.models import Allocation, EnvironmentTier, Namespace, Request
from tenants.services.definitions import current_tier_revision
from tests.support.api import api
from tests.support.cluster import as_admin
from tests.support.gitops_loop import submit, work
from tests.support.workflow import approve_if_needed

# The GitOps loop's world (tests/support/gitops_loop.py) applies Argo CD's and Kargo's
# objects: with the upstream CRDs only (they skip, saying why, without them).
pytestmark = [pytest.mark.django_db(transaction=False), pytest.mark.crds]

NAME = "payments-web-dev"


def default_memory(sandbox) -> str:
    limits = as_admin(sandbox, "GET", f"/api/v1/namespaces/{NAME}/limitranges/berth-limits")
    return limits["spec"]["limits"][0]["default"]["memory"]


def reconcile_cycle() -> None:
    """What beat's periodic jobs do to live namespaces: drift reconcile, truth tables."""
    tasks.reconcile()
    tasks.take_truth_tables()


@pytest.fixture
def running(gitops_world, sandbox):
    """payments-web-dev provisioned on dev v1 (512Mi containers by default); dev repairs
    drift by itself."""
    EnvironmentTier.objects.filter(slug="dev").update(
        auto_repair_drift=True, container_default_memory_mib=512
    )
    submit(
        gitops_world,
        "namespace",
        app="web",
        tier="dev",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    work()
    namespace = Namespace.objects.get(name=NAME, state="active")
    assert namespace.tier_revision.number == 1
    assert default_memory(sandbox) == "512Mi"
    return gitops_world


def edit_dev_tier() -> EnvironmentTier:
    """768Mi by default, numbered as a save in the admin numbers it."""
    tier = EnvironmentTier.objects.get(slug="dev")
    tier.container_default_memory_mib = 768
    tier.save()
    current_tier_revision(tier=tier)
    return tier


def repair_and_sync(gitops_world) -> None:
    """The truth table's Repair, then a tenant change's tenant_sync, each run by the worker."""
    services.repair_truth(tenant=gitops_world["tenant"], actor=gitops_world["admin"])
    work()
    services.request_tenant_sync(
        tenant=gitops_world["tenant"],
        actor=gitops_world["admin"],
        reason="Test: the records are applied again.",
    )
    work()
    assert (
        not Request.objects.filter(kind=RequestKind.TENANT_SYNC)
        .exclude(state=RequestState.READY)
        .exists()
    )


def test_an_edited_tier_changes_no_namespace_until_a_campaign_applies_it(running, sandbox):
    edit_dev_tier()
    reconcile_cycle()
    repair_and_sync(running)
    reconcile_cycle()

    namespace = Namespace.objects.select_related("tier", "tier_revision", "bundle_revision").get(
        name=NAME
    )
    assert default_memory(sandbox) == "512Mi"
    assert namespace.tier_revision.number == 1
    assert namespace.drift == []  # v2's difference is an upgrade, not drift
    definition = selectors.definition_of(namespace)
    assert definition.version == 1
    said = "the dev tier's definition has changed since v1: v2 available"
    assert said in definition.behind
    shown = api(running["owner"]).get(f"/api/v1/namespaces/{namespace.pk}/").json()
    assert shown["definition"]["tier_version"] == 1 and said in shown["definition"]["behind"]

    campaign = services.create_campaign(
        actor=running["admin"], tier=namespace.tier, reason="Dev containers default to 768Mi."
    )
    assert engine_campaigns.roll(campaign.pk) == CampaignState.DONE
    assert default_memory(sandbox) == "768Mi"
    namespace.refresh_from_db()
    assert namespace.tier_revision.number == 2
    # Showback: Repair, the tenant_sync and the campaign applied the same quota again, so
    # the namespace still holds the one allocation it opened when it was Ready.
    [held] = Allocation.objects.filter(namespace=namespace)
    assert held.ended_at is None and held.started_by == AllocationChange.READY


def test_hand_edits_are_repaired_back_to_the_definition_the_namespace_runs(running, sandbox):
    edit_dev_tier()
    path = f"/api/v1/namespaces/{NAME}/limitranges/berth-limits"
    limits = as_admin(sandbox, "GET", path)
    limits["spec"]["limits"][0]["default"]["memory"] = "2Gi"
    limits["metadata"].pop("managedFields", None)
    as_admin(sandbox, "PUT", path, limits)

    reconcile_cycle()

    assert default_memory(sandbox) == "512Mi"  # v1's value, not the edited tier's 768Mi
    [finding] = Namespace.objects.get(name=NAME).drift
    assert finding["status"] == "changed" and finding["repaired"]


def test_a_rollback_survives_three_reconcile_cycles(running, sandbox):
    tier = edit_dev_tier()
    campaign = services.create_campaign(
        actor=running["admin"], tier=tier, reason="Dev containers default to 768Mi."
    )
    assert engine_campaigns.roll(campaign.pk) == CampaignState.DONE
    assert default_memory(sandbox) == "768Mi"

    services.roll_back_campaign(campaign_id=campaign.pk, actor=running["admin"])
    assert engine_campaigns.roll_back(campaign.pk) == CampaignState.ROLLED_BACK
    for _ in range(3):
        reconcile_cycle()
        assert default_memory(sandbox) == "512Mi"
    repair_and_sync(running)
    assert default_memory(sandbox) == "512Mi"
    assert Namespace.objects.get(name=NAME).tier_revision.number == 1


def test_a_quota_change_keeps_the_definition_the_namespace_runs(running, sandbox):
    edit_dev_tier()
    change = submit(running, "quota_change", namespace=NAME, cpu="750m", memory="768Mi")
    approve_if_needed(change, approver=running["admin"])
    work()
    namespace = Namespace.objects.get(name=NAME)
    assert namespace.cpu_millis == 750
    assert namespace.tier_revision.number == 1
    assert default_memory(sandbox) == "512Mi"


def test_the_truth_table_calls_the_edited_tier_an_upgrade_not_a_disagreement(running, client):
    edit_dev_tier()
    table = provisioner.take_truth(running["tenant"])
    namespace_rows = [row for row in table["rows"] if row.get("namespace") == NAME]
    assert namespace_rows
    assert all(row["state"] == "in_sync" for row in namespace_rows), namespace_rows

    said = f"{NAME} runs dev v1; v2 available"
    owner = api(running["owner"])
    assert owner.get("/api/v1/tenants/payments/truth/").json()["upgrades"] == [said]
    client.force_login(running["owner"])
    page = client.get(f"/tenants/payments/truth/?namespace={NAME}").content.decode()
    assert said in page


def test_an_auto_approved_request_whose_plan_moves_before_its_run_goes_back_to_approval(
    gitops_world, sandbox
):
    made = submit(
        gitops_world,
        "namespace",
        app="api",
        tier="dev",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    assert made.state == RequestState.APPROVED  # dev: a rule approves on its own
    [approval] = made.approvals.all()
    assert approval.approver is None and approval.plan_digest  # bound to what the rule saw

    edit_dev_tier()  # before the worker gets to it: the plan it would apply is another
    work()

    made.refresh_from_db()
    assert made.state == RequestState.SUBMITTED
    assert "moved after approval" in made.status_message
    assert sandbox.get("Namespace", "payments-api-dev") is None


def test_an_auto_approved_request_whose_plan_holds_is_provisioned(gitops_world, sandbox):
    made = submit(
        gitops_world,
        "namespace",
        app="api",
        tier="dev",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    work()
    made.refresh_from_db()
    assert made.state == RequestState.READY
