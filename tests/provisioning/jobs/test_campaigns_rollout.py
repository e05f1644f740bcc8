"""Upgrade campaigns rolling out, end to end against the Kubernetes API stand-in: a tier's
definition changes under 30 live namespaces; the campaign shows each namespace's diff grouped
by shape (a hand-edited one stands out), rolls out a canary then waves, pauses at an injected
failure, resumes, and rolls everything back. Also who may approve a campaign, a change that
would touch no namespace, and a campaign whose worker died."""

from __future__ import annotations

import pytest

from provisioning.jobs import campaigns as engine_campaigns
from tenants import services
from tenants.choices import CampaignState, TargetState
from tenants.errors import NotAllowed
from tenants.models import AuditEvent, CampaignTarget, EnvironmentTier, Namespace, User
from tests.support.cluster import as_admin
from tests.support.gitops_loop import submit, work
from tests.support.jobs_campaigns import roll

COUNT = 30


def limits(sandbox, namespace: str) -> dict:
    return as_admin(sandbox, "GET", f"/api/v1/namespaces/{namespace}/limitranges/berth-limits")


@pytest.fixture
def thirty(gitops_world):
    tenant = gitops_world["tenant"]
    tenant.budget_namespaces, tenant.budget_cpu_millis = 40, 64000
    tenant.budget_memory_mib = 128 * 1024
    tenant.save()
    for n in range(1, COUNT + 1):
        submit(
            gitops_world,
            "namespace",
            app=f"app{n:02}",
            tier="dev",
            cluster="sandbox",
            cpu="250m",
            memory="256Mi",
        )
    work()
    live = Namespace.objects.filter(tenant=tenant, state="active", tier__slug="dev")
    assert live.count() == COUNT
    return gitops_world


def versions(tier: str = "dev") -> dict[int, int]:
    """Tier definition version -> how many live namespaces of the tier run it."""
    found: dict[int, int] = {}
    for number in Namespace.objects.filter(state="active", tier__slug=tier).values_list(
        "tier_revision__number", flat=True
    ):
        found[number] = found.get(number, 0) + 1
    return found


@pytest.mark.scale
def test_a_tier_change_reaches_thirty_namespaces_in_waves_pausing_at_a_failure(thirty, sandbox):
    admin = thirty["admin"]
    assert versions() == {1: COUNT}  # provisioning recorded what it applied
    EnvironmentTier.objects.filter(slug="dev").update(container_default_memory_mib=768)
    hand = "/api/v1/namespaces/payments-app03-dev/resourcequotas/berth-quota"
    quota = as_admin(sandbox, "GET", hand)
    quota["spec"]["hard"]["requests.cpu"] = "8"
    quota["metadata"].pop("managedFields", None)
    as_admin(sandbox, "PUT", hand, quota)

    campaign = services.create_campaign(
        actor=admin,
        tier=EnvironmentTier.objects.get(slug="dev"),
        reason="Dev containers default to 768Mi.",
        canary=1,
        batch=10,
    )
    targets = list(campaign.targets.select_related("namespace"))
    assert len(targets) == COUNT
    # One shape for 29 namespaces; the hand-edited one has its own, its quota put back.
    groups: dict[str, list[str]] = {}
    for target in targets:
        groups.setdefault(target.group, []).append(target.namespace.name)
    assert sorted(len(names) for names in groups.values()) == [1, COUNT - 1]
    [edited] = [t for t in targets if t.namespace.name == "payments-app03-dev"]
    assert "-    requests.cpu: '8'" in edited.diff and "+      memory: 768Mi" in edited.diff
    assert [t.wave for t in targets][:12] == [1] + [2] * 10 + [3]
    # dev is approved by the default rules, as dev requests are.
    assert campaign.policy_rule == "dev-and-review-auto-approve"
    assert campaign.state == CampaignState.ROLLING

    sandbox.inject_faults(
        403,
        times=None,
        method="PATCH",
        path_contains="/namespaces/payments-app07-dev/",
        message="admission webhook denied the request",
    )
    assert roll(campaign) == CampaignState.PAUSED
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.PAUSED
    assert "payments-app07-dev failed" in campaign.status_message
    states = dict(
        CampaignTarget.objects.filter(campaign=campaign).values_list("namespace__name", "state")
    )
    assert [n for n, s in states.items() if s == TargetState.APPLIED] == [
        f"payments-app{n:02}-dev" for n in range(1, 7)
    ]
    assert states["payments-app07-dev"] == TargetState.FAILED
    assert sum(s == TargetState.PENDING for s in states.values()) == COUNT - 7
    assert campaign.tier_revision.number == 2
    assert versions() == {2: 6, 1: COUNT - 6}  # the failed one still runs v1
    assert (
        limits(sandbox, "payments-app01-dev")["spec"]["limits"][0]["default"]["memory"] == "768Mi"
    )
    assert (
        limits(sandbox, "payments-app20-dev")["spec"]["limits"][0]["default"]["memory"] != "768Mi"
    )

    sandbox.clear_faults()
    services.resume_campaign(campaign_id=campaign.pk, actor=admin)
    assert roll(campaign) == CampaignState.DONE
    assert set(
        CampaignTarget.objects.filter(campaign=campaign).values_list("state", flat=True)
    ) == {TargetState.APPLIED}
    for n in (7, 20, 30):
        assert (
            limits(sandbox, f"payments-app{n:02}-dev")["spec"]["limits"][0]["default"]["memory"]
            == "768Mi"
        )
    assert as_admin(sandbox, "GET", hand)["spec"]["hard"]["requests.cpu"] != "8"
    assert versions() == {2: COUNT}

    services.roll_back_campaign(campaign_id=campaign.pk, actor=admin)
    assert engine_campaigns.roll_back(campaign.pk) == CampaignState.ROLLED_BACK
    assert (
        limits(sandbox, "payments-app20-dev")["spec"]["limits"][0]["default"]["memory"] != "768Mi"
    )
    # Back on the definitions it ran before: the hand edit the campaign put right was drift,
    # and is not brought back.
    assert as_admin(sandbox, "GET", hand)["spec"]["hard"]["requests.cpu"] == "250m"
    assert versions() == {1: COUNT}
    rolled_back = AuditEvent.objects.filter(
        action="namespace.reconciled", object_id=str(edited.namespace_id)
    ).order_by("id")
    assert [e.after["causes"] for e in rolled_back] == [
        [f"campaign {campaign.pk}"],
        [f"rollback {campaign.pk}"],
    ]
    assert list(
        AuditEvent.objects.filter(object_id=str(campaign.pk), action__startswith="campaign.")
        .order_by("id")
        .values_list("action", flat=True)
    ) == [
        "campaign.create",
        "campaign.paused",
        "campaign.resumed",
        "campaign.done",
        "campaign.rolling back",
        "campaign.rolled_back",
    ]


def test_approval_follows_the_rules_and_nobody_approves_their_own(gitops_world):
    admin = gitops_world["admin"]
    work_done = submit(
        gitops_world,
        "namespace",
        app="shop",
        tier="prod",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    from tests.support.workflow import approve_if_needed

    approve_if_needed(work_done, approver=admin)
    work()
    EnvironmentTier.objects.filter(slug="prod").update(container_default_memory_mib=1024)
    campaign = services.create_campaign(
        actor=admin, tier=EnvironmentTier.objects.get(slug="prod"), reason="Bigger defaults."
    )
    assert campaign.state == CampaignState.AWAITING_APPROVAL
    assert campaign.policy_rule == "prod-needs-platform-admin"
    with pytest.raises(NotAllowed, match="their own"):
        services.approve_campaign(campaign_id=campaign.pk, actor=admin)
    with pytest.raises(NotAllowed):
        services.approve_campaign(
            campaign_id=campaign.pk, actor=User.objects.get(username="olivia")
        )
    other = User.objects.create(username="pia", is_platform_admin=True)
    services.approve_campaign(campaign_id=campaign.pk, actor=other)
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.ROLLING and campaign.decided_by == other
    with pytest.raises(services.CampaignMove, match="cannot be approved"):
        services.approve_campaign(campaign_id=campaign.pk, actor=other)


def test_nothing_to_change_is_said_and_no_campaign_is_made(gitops_world):
    from tenants.errors import InvalidInput

    submit(
        gitops_world,
        "namespace",
        app="shop",
        tier="dev",
        cluster="sandbox",
        cpu="250m",
        memory="256Mi",
    )
    work()
    with pytest.raises(InvalidInput, match="No active namespace would change"):
        services.create_campaign(
            actor=gitops_world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="Nothing changed.",
        )


def test_a_campaign_whose_worker_died_is_picked_up_by_the_sweep(prod_change, settings):
    from datetime import timedelta

    from django.utils import timezone

    from portal.celery import app as celery_app
    from provisioning.tasks import sweep_campaigns
    from tenants.models import UpgradeCampaign

    other = User.objects.create(username="pia", is_platform_admin=True)
    campaign = services.create_campaign(
        actor=prod_change["admin"],
        tier=EnvironmentTier.objects.get(slug="prod"),
        reason="Bigger defaults.",
        canary=1,
        batch=1,
    )
    services.approve_campaign(campaign_id=campaign.pk, actor=other)
    # A worker took it and died: its lease holds the campaign until it lapses.
    UpgradeCampaign.objects.filter(pk=campaign.pk).update(
        lease_owner="gone:1", lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    assert engine_campaigns.roll(campaign.pk, "alive:2") == "held by another worker"
    assert sweep_campaigns() == []  # not lapsed yet
    UpgradeCampaign.objects.filter(pk=campaign.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    celery_app.conf.task_always_eager = True
    try:
        assert sweep_campaigns() == [campaign.pk]
    finally:
        celery_app.conf.task_always_eager = False
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.DONE and not campaign.lease_owner
    assert versions("prod") == {2: 2}
