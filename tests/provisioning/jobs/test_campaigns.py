"""Upgrade campaigns, end to end against the Kubernetes API stand-in: a tier's definition
changes under 30 live namespaces; the campaign shows each namespace's diff grouped by shape
(a hand-edited one stands out), rolls out a canary then waves, pauses at an injected
failure, resumes, and rolls everything back."""

from __future__ import annotations

import pytest

from provisioning.jobs import campaigns as engine_campaigns
from tenants import services
from tenants.choices import CampaignState, TargetState
from tenants.errors import NotAllowed
from tenants.models import (
    AuditEvent,
    CampaignTarget,
    EnvironmentTier,
    Namespace,
    User,
)
from tests.support.cluster import as_admin
from tests.support.gitops_loop import submit, work

COUNT = 30


def limits(sandbox, namespace: str) -> dict:
    return as_admin(sandbox, "GET", f"/api/v1/namespaces/{namespace}/limitranges/berth-limits")


@pytest.fixture
def thirty(world):
    tenant = world["tenant"]
    tenant.budget_namespaces, tenant.budget_cpu_millis = 40, 64000
    tenant.budget_memory_mib = 128 * 1024
    tenant.save()
    for n in range(1, COUNT + 1):
        submit(
            world,
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
    return world


def roll(campaign) -> str:
    """What the worker does with the campaign's task."""
    return engine_campaigns.roll(campaign.pk)


def versions(tier: str = "dev") -> dict[int, int]:
    """Tier definition version -> how many live namespaces of the tier run it."""
    found: dict[int, int] = {}
    for number in Namespace.objects.filter(state="active", tier__slug=tier).values_list(
        "tier_revision__number", flat=True
    ):
        found[number] = found.get(number, 0) + 1
    return found


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
    assert as_admin(sandbox, "GET", hand)["spec"]["hard"]["requests.cpu"] == "8"  # as it was
    assert versions() == {1: COUNT}
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


def test_approval_follows_the_rules_and_nobody_approves_their_own(world):
    admin = world["admin"]
    work_done = submit(
        world, "namespace", app="shop", tier="prod", cluster="sandbox", cpu="500m", memory="512Mi"
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


def test_nothing_to_change_is_said_and_no_campaign_is_made(world):
    from tenants.errors import InvalidInput

    submit(
        world, "namespace", app="shop", tier="dev", cluster="sandbox", cpu="250m", memory="256Mi"
    )
    work()
    with pytest.raises(InvalidInput, match="No active namespace would change"):
        services.create_campaign(
            actor=world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="Nothing changed.",
        )


# --- versions: what each namespace runs ------------------------------------------------------


def test_a_tier_definition_is_numbered_once_per_change_and_namespaces_show_what_they_run(
    world, client
):
    from tenants.services.definitions import current_tier_revision
    from tests.support.api import api

    submit(
        world, "namespace", app="shop", tier="dev", cluster="sandbox", cpu="250m", memory="256Mi"
    )
    work()
    dev = EnvironmentTier.objects.get(slug="dev")
    shop = Namespace.objects.get(name="payments-shop-dev")
    assert (shop.tier_revision.number, shop.bundle_revision.number) == (1, 1)
    assert current_tier_revision(tier=dev).number == 1  # the same definition: no new number
    owner = api(User.objects.get(username="olivia"))
    shown = owner.get(f"/api/v1/namespaces/{shop.pk}/").json()["definition"]
    assert shown == {"tier_version": 1, "bundle_version": 1, "current": True, "behind": []}

    dev.pod_security_level = "restricted"
    dev.save()
    shown = owner.get(f"/api/v1/namespaces/{shop.pk}/").json()["definition"]
    assert shown["current"] is False
    assert shown["behind"] == ["the dev tier's definition has changed since v1"]
    client.force_login(world["owner"])
    page = client.get(f"/namespaces/{shop.pk}/").content.decode()
    assert "dev v1 · bundle v1" in page and "upgrade due" in page
    assert current_tier_revision(tier=dev).number == 2
    # Back as it was: the definition v1 names again, so namespaces on v1 are current (a
    # rollback or a revert is never dressed up as an upgrade).
    dev.pod_security_level = "baseline"
    dev.save()
    assert current_tier_revision(tier=dev).number == 1
    assert api(world["admin"]).get("/api/v1/tiers/dev/").json()["version"] == 1
    assert owner.get(f"/api/v1/namespaces/{shop.pk}/").json()["definition"]["current"] is True
    dev.container_default_memory_mib = 1024  # a definition not seen before: the next number
    dev.save()
    assert current_tier_revision(tier=dev).number == 3


def test_saving_a_tier_in_the_admin_numbers_its_new_definition(world, client):
    dev = EnvironmentTier.objects.get(slug="dev")
    before = dev.revisions.count()
    staff = world["admin"]
    staff.is_staff = staff.is_superuser = True  # Django's admin is for staff
    staff.save()
    client.force_login(staff)
    url = f"/admin/tenants/environmenttier/{dev.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name) for name in form.fields}
    data = {
        name: "" if value is None else value for name, value in data.items() if value is not False
    }
    data["container_default_memory_mib"] = 1536
    saved = client.post(url, data, follow=True).content.decode()
    latest = dev.revisions.order_by("-number").first()
    assert latest.number == before + 1
    assert latest.definition["container_default_memory_mib"] == 1536
    assert f"Tier dev is now at definition v{latest.number}" in saved


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


# --- a new Berth whose templates write different GitOps files --------------------------------


def test_new_templates_reach_the_tenants_repository_as_a_commit_after_the_namespaces(
    world, monkeypatch, client
):
    from provisioning import versions
    from provisioning.gitops_plan import files as gitops_files
    from tenants.choices import RequestKind, RequestState
    from tenants.models import Request
    from tests.support.gitops_loop import project
    from tests.support.gitserver import files_on

    project(world, "shop", "argocd", "dev")
    work()
    shop = Namespace.objects.get(name="payments-shop-dev")
    assert shop.bundle_revision.number == 1
    path = "apps/shop/dev/application.yaml"
    assert "ServerSideApply=true" not in files_on(world["bare"])[path]

    real = gitops_files.application

    def server_side(inputs, ns):  # what a newer Berth writes: Argo CD applies server-side
        document = real(inputs, ns)
        document["spec"]["syncPolicy"]["syncOptions"].append("ServerSideApply=true")
        return document

    monkeypatch.setattr(gitops_files, "application", server_side)
    versions.bundle_digest.cache_clear()
    try:
        campaign = services.create_campaign(
            actor=world["admin"],
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

        client.force_login(world["admin"])
        page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
        assert "1 repository" in page and "ServerSideApply=true" in page

        assert roll(campaign) == CampaignState.DONE
        commit.refresh_from_db()
        assert commit.state == TargetState.FILED
        filed = commit.request
        assert (filed.kind, filed.state) == (RequestKind.TENANT_SYNC, RequestState.APPROVED)
        assert f"Upgrade campaign #{campaign.pk}" in filed.payload["reason"]
        shop.refresh_from_db()
        assert shop.bundle_revision.number == 2
        work()
        assert Request.objects.get(pk=filed.pk).state == RequestState.READY
        assert "ServerSideApply=true" in files_on(world["bare"])[path]
    finally:
        monkeypatch.undo()
        versions.bundle_digest.cache_clear()


def test_a_refused_commit_pauses_the_campaign_and_says_why(world, monkeypatch):
    from provisioning import versions
    from provisioning.gitops_plan import files as gitops_files
    from tenants.models import ApprovalRule
    from tests.support.gitops_loop import project

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
    finally:
        monkeypatch.undo()
        versions.bundle_digest.cache_clear()


# --- pages, API, the tenant's notice -------------------------------------------------------


def test_pages_start_decide_and_show_the_notice_to_the_tenant(prod_change, client):
    admin = prod_change["admin"]
    client.force_login(admin)
    bad = client.post("/campaigns/", {"tier": "", "reason": "", "canary": 0, "batch": 10})
    assert bad.status_code == 200
    assert "Say why" not in bad.content.decode()  # the form's own check comes first
    assert "This field is required." in bad.content.decode()
    prod = EnvironmentTier.objects.get(slug="prod")
    made = client.post(
        "/campaigns/",
        {"tier": prod.pk, "reason": "Bigger defaults.", "canary": 1, "batch": 1},
        follow=True,
    )
    html = made.content.decode()
    assert "2 namespace(s) would change" in html and "+      memory: 1Gi" in html
    assert "1 distinct change over 2 namespaces" in html
    assert "Another platform admin approves it." in html
    dashboard = client.get("/dashboard/").content.decode()
    assert "Upgrade campaigns under way" in dashboard and "Awaiting approval" in dashboard

    owner = User.objects.get(username="olivia")
    client.force_login(owner)
    assert client.get("/campaigns/").status_code == 403
    shop = Namespace.objects.get(name="payments-shop-prod")
    page = client.get(f"/namespaces/{shop.pk}/").content.decode()
    assert "Upgrade pending" in page and "Bigger defaults." in page


def test_the_api_starts_moves_and_refuses_as_a_person_expects(prod_change):
    from tests.support.api import api, assert_problem

    admin = api(prod_change["admin"])
    body = assert_problem(
        admin.post("/api/v1/campaigns/", {"tier": "nope", "reason": ""}, format="json"), 400
    )
    assert set(body["errors"]) == {"tier", "reason"}
    made = admin.post(
        "/api/v1/campaigns/",
        {"tier": "prod", "reason": "Bigger defaults.", "canary": 1, "batch": 5},
        format="json",
    )
    assert made.status_code == 201, made.content
    campaign = made.json()
    assert campaign["state"] == "awaiting_approval" and campaign["namespaces"] == 2
    assert [t["wave"] for t in campaign["targets"]] == [1, 2]
    [group] = campaign["groups"]
    assert group["namespaces"] == ["payments-cart-prod", "payments-shop-prod"]
    own = admin.post(f"/api/v1/campaigns/{campaign['id']}/approve/")
    assert_problem(own, 403)
    other = User.objects.create(username="pia", is_platform_admin=True)
    approved = api(other).post(f"/api/v1/campaigns/{campaign['id']}/approve/").json()
    assert approved["state"] == "rolling" and approved["decided_by"] == "pia"
    assert_problem(api(other).post(f"/api/v1/campaigns/{campaign['id']}/resume/"), 409)
    owner = api(User.objects.get(username="olivia"))
    assert_problem(owner.get("/api/v1/campaigns/"), 403)
    assert_problem(owner.get(f"/api/v1/campaigns/{campaign['id']}/"), 403)
    assert engine_campaigns.roll(campaign["id"]) == CampaignState.DONE
    assert admin.get(f"/api/v1/campaigns/{campaign['id']}/").json()["applied"] == 2


def test_a_cluster_that_cannot_be_read_makes_no_campaign_and_says_why(
    prod_change, client, settings
):
    from tenants.models import Cluster, UpgradeCampaign
    from tests.support.api import api, assert_problem

    settings.KUBE_BACKOFF_SECONDS = 0.01
    Cluster.objects.filter(name="sandbox").update(api_url="http://127.0.0.1:9")
    client.force_login(prod_change["admin"])
    page = client.post(
        "/campaigns/",
        {
            "tier": EnvironmentTier.objects.get(slug="prod").pk,
            "reason": "Bigger defaults.",
            "canary": 1,
            "batch": 5,
        },
    )
    assert "The diffs cannot be computed: a cluster could not be read" in page.content.decode()
    body = assert_problem(
        api(prod_change["admin"]).post(
            "/api/v1/campaigns/", {"tier": "prod", "reason": "Bigger defaults."}, format="json"
        ),
        409,
    )
    assert "could not be read" in body["detail"]
    assert not UpgradeCampaign.objects.exists()
