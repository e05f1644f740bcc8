"""One owner per namespace name: the registry (tenants.models.NamespaceClaim), the names Berth
keeps for itself, and the plan's refusal to touch what belongs to something else."""

from __future__ import annotations

from dataclasses import replace

import pytest

from provisioning.inputs import claims_of, plan_input_for
from provisioning.jobs import current_plan
from provisioning.plan import ObjectRef, Plan, ref_of
from provisioning.validation import validate_plan
from tenants import demo, services
from tenants.choices import NamePurpose, NamespaceState, RequestKind, RequestState
from tenants.errors import InvalidInput
from tenants.models import (
    Cluster,
    EnvironmentTier,
    Namespace,
    NamespaceClaim,
    Project,
    Request,
    Tenant,
    User,
)
from tenants.naming import namespace_name


@pytest.fixture
def world(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    tenant = Tenant.objects.get(slug="payments")
    return {
        "tenant": tenant,
        "cluster": Cluster.objects.get(name="sandbox"),
        "developer": User.objects.get(username="dev"),
        "owner": User.objects.get(username="olivia"),
        "admin": User.objects.get(username="pat"),
    }


def live(name: str) -> NamespaceClaim | None:
    return NamespaceClaim.objects.filter(name=name, released_at__isnull=True).first()


def submit(world, kind, requester=None, **payload):
    return services.submit_request(
        tenant=world["tenant"],
        kind=kind,
        requester=requester or world["developer"],
        payload=payload,
    )


def kargo_project(world, app="shop", *, tiers=("dev", "staging"), provisioned=True):
    """A project on Argo CD + Kargo, submitted (and, for the records, provisioned)."""
    created = submit(
        world,
        RequestKind.PROJECT,
        requester=world["owner"],
        app=app,
        engine="argocd_kargo",
        cluster="sandbox",
        tiers=list(tiers),
    )
    if provisioned:
        Project.objects.get_or_create(
            tenant=world["tenant"], name=app, defaults={"gitops_engine": "argocd_kargo"}
        )
    return created


def errors(exc: InvalidInput) -> str:
    return str(exc.field_errors)


# --- what is claimed, when ---------------------------------------------------------------


def test_a_cluster_registered_claims_its_platform_namespaces_and_berths(world):
    purposes = dict(
        NamespaceClaim.objects.filter(cluster=world["cluster"], tenant=None).values_list(
            "name", "purpose"
        )
    )
    for name in (
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "default",
        "argocd",
        "kargo",
        "flux-system",
        "ingress-nginx",
    ):
        assert purposes[name] == NamePurpose.PLATFORM
    assert purposes["berth-system"] == NamePurpose.BERTH


def test_every_tenant_holds_its_argocd_and_flux_namespaces_on_its_clusters(world):
    for name, purpose in (
        ("payments-apps", NamePurpose.ARGOCD_APPS),
        ("payments-gitops", NamePurpose.GITOPS),
    ):
        claim = live(name)
        assert (claim.purpose, claim.tenant) == (purpose, world["tenant"])


def test_a_project_claims_its_tier_namespaces_and_its_kargo_namespace_at_submission(world):
    created = kargo_project(world)
    assert live("payments-shop-dev").purpose == NamePurpose.TIER
    assert live("payments-shop-dev").request == created
    kargo = live("payments-shop-kargo")
    assert (kargo.purpose, kargo.app, kargo.request) == (NamePurpose.KARGO, "shop", created)


def test_refusing_a_request_frees_its_names_but_not_the_tenants(world):
    created = kargo_project(world, app="cart", provisioned=False)
    services.reject_request(
        request_id=created.pk, approver=world["admin"], reason="Not this quarter."
    )
    assert live("payments-cart-dev") is None
    assert live("payments-cart-kargo") is None
    assert live("payments-apps") is not None
    # ... so the same names can be asked for again.
    kargo_project(world, app="cart", provisioned=False)


def test_a_decommissioned_namespace_frees_its_name(world):
    from provisioning.records.outcomes import record_outcomes

    ns = Namespace.objects.create(
        name="payments-old-dev",
        tenant=world["tenant"],
        cluster=world["cluster"],
        tier=EnvironmentTier.objects.get(slug="dev"),
        state=NamespaceState.ACTIVE,
        cpu_millis=100,
        memory_mib=128,
    )
    services.names.claim(
        cluster=world["cluster"],
        name=ns.name,
        purpose=NamePurpose.TIER,
        tenant=world["tenant"],
        app="old",
        tier="dev",
        namespace=ns,
    )
    decommission = submit(
        world, RequestKind.DECOMMISSION, requester=world["owner"], namespace=ns.name, reason="Gone."
    )
    record_outcomes(requests=[(decommission, plan_input_for(decommission))])
    assert live("payments-old-dev") is None


# --- the Kargo takeover, and its relatives ---------------------------------------------------


def test_an_environment_slug_of_kargo_is_refused_naming_the_kargo_namespace(world):
    kargo_project(world)
    with pytest.raises(InvalidInput) as refused:
        submit(world, RequestKind.EPHEMERAL, project="shop", env_slug="kargo")
    assert "'kargo' is reserved: payments-shop-kargo is the project's Kargo namespace" in errors(
        refused.value
    )
    assert live("payments-shop-kargo").purpose == NamePurpose.KARGO


def test_an_environment_slug_of_a_tier_is_refused(world):
    kargo_project(world)
    with pytest.raises(InvalidInput) as refused:
        submit(world, RequestKind.EPHEMERAL, project="shop", env_slug="prod")
    assert "payments-shop-prod is the project's prod namespace" in errors(refused.value)


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("payments-shop-kargo", "ends with -kargo"),
        ("$TENANT-$PROJECT-kargo", "ends with -kargo"),
        ("payments-apps", "the tenant's Argo CD applications namespace"),
        ("$TENANT-gitops", "the tenant's Flux GitOps namespace"),
        ("kube-system", "reserved"),
    ],
)
def test_environment_rules_may_not_name_berths_own_names(world, template, why):
    with pytest.raises(InvalidInput) as refused:
        services.replace_environment_rules(
            tenant=world["tenant"],
            actor=world["owner"],
            rules=[{"if": "", "namespace": template}],
        )
    assert "Rule 1:" in errors(refused.value)
    assert why in errors(refused.value)


def test_a_rule_may_not_share_a_projects_tier_namespace(world):
    kargo_project(world)
    with pytest.raises(InvalidInput) as refused:
        services.replace_environment_rules(
            tenant=world["tenant"],
            actor=world["owner"],
            rules=[{"if": "", "namespace": "payments-shop-dev"}],
        )
    assert "payments-shop-dev is kept for the dev namespace of shop" in errors(refused.value)


def test_a_rule_evaluating_to_a_registered_name_is_refused_at_submission(world):
    kargo_project(world)
    # A template that only the branch makes dangerous: saved, then refused when it names
    # the project's Kargo namespace.
    services.replace_environment_rules(
        tenant=world["tenant"],
        actor=world["owner"],
        rules=[{"if": "", "namespace": "$TENANT-$PROJECT-$BRANCH"}],
    )
    with pytest.raises(InvalidInput) as refused:
        submit(world, RequestKind.EPHEMERAL, project="shop", env_slug="review-1", branch="kargo")
    assert "ends with -kargo" in errors(refused.value)
    with pytest.raises(InvalidInput) as refused:
        submit(world, RequestKind.EPHEMERAL, project="shop", env_slug="review-2", branch="dev")
    assert "payments-shop-dev is kept for the dev namespace of shop" in errors(refused.value)


def test_a_shared_rule_namespace_held_for_another_purpose_is_refused(world):
    Project.objects.create(tenant=world["tenant"], name="shop")
    NamespaceClaim.objects.create(
        cluster=world["cluster"],
        name="payments-review",
        purpose=NamePurpose.TIER,
        tenant=world["tenant"],
        app="review",
        tier="dev",
    )
    with pytest.raises(InvalidInput) as refused:
        services.replace_environment_rules(
            tenant=world["tenant"],
            actor=world["owner"],
            rules=[{"if": "", "namespace": "payments-review"}],
        )
    assert "payments-review on sandbox is the dev namespace of review" in errors(refused.value)


# --- collisions ---------------------------------------------------------------------------


def test_a_name_collision_is_refused_as_such_naming_the_other_owner(world):
    """Two long app names shortened to the same name: the second is told what holds it,
    not that it was 'already requested'."""
    app = "a-very-long-application-name-for-the-quarterly-reports"
    name = namespace_name("payments", app, "dev")
    NamespaceClaim.objects.create(
        cluster=world["cluster"],
        name=name,
        purpose=NamePurpose.TIER,
        tenant=world["tenant"],
        app=app + "-other",
        tier="dev",
    )
    with pytest.raises(InvalidInput) as refused:
        submit(
            world,
            RequestKind.NAMESPACE,
            app=app,
            tier="dev",
            cluster="sandbox",
            cpu="500m",
            memory="512Mi",
        )
    message = errors(refused.value)
    assert f"{name} on sandbox is the dev namespace of {app}-other" in message
    assert "already requested" not in message


def test_another_tenants_name_is_refused_without_its_details(world):
    search = Tenant.objects.get(slug="search")
    NamespaceClaim.objects.create(
        cluster=world["cluster"],
        name="payments-x-dev",
        purpose=NamePurpose.TIER,
        tenant=search,
        app="x",
        tier="dev",
    )
    with pytest.raises(InvalidInput) as refused:
        submit(
            world,
            RequestKind.NAMESPACE,
            app="x",
            tier="dev",
            cluster="sandbox",
            cpu="500m",
            memory="512Mi",
        )
    assert "payments-x-dev on sandbox is another tenant's namespace" in errors(refused.value)
    assert "search" not in errors(refused.value)


def test_the_same_namespace_asked_twice_is_already_requested(world):
    first = submit(
        world,
        RequestKind.NAMESPACE,
        app="x",
        tier="prod",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    with pytest.raises(InvalidInput) as refused:
        submit(
            world,
            RequestKind.NAMESPACE,
            app="x",
            tier="prod",
            cluster="sandbox",
            cpu="500m",
            memory="512Mi",
        )
    assert f"payments-x-prod is already requested (request #{first.pk})" in errors(refused.value)


def test_a_concurrent_claim_is_caught_by_the_database(world):
    """The registry's unique constraint is the backstop when a check raced a claim."""
    from django.db import IntegrityError, transaction

    NamespaceClaim.objects.create(
        cluster=world["cluster"],
        name="payments-race",
        purpose=NamePurpose.SHARED,
        tenant=world["tenant"],
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        NamespaceClaim.objects.create(
            cluster=world["cluster"],
            name="payments-race",
            purpose=NamePurpose.TIER,
            tenant=world["tenant"],
        )


# --- cluster, tier and tenant settings ------------------------------------------------------


def test_a_cluster_setting_naming_a_tenant_namespace_is_refused(world):
    submit(
        world,
        RequestKind.NAMESPACE,
        app="x",
        tier="prod",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    with pytest.raises(InvalidInput) as refused:
        services.save_cluster(
            actor=world["admin"],
            cluster=world["cluster"],
            values={"ingress_namespace": "payments-x-prod"},
        )
    assert "ingress_namespace" in refused.value.field_errors
    assert Cluster.objects.get(name="sandbox").ingress_namespace == "ingress-nginx"


@pytest.mark.parametrize(
    ("slug", "why"),
    [
        ("pre-prod", "has a dash"),
        ("kargo", "is reserved"),
        ("base", "is reserved"),
    ],
)
def test_tier_slugs_that_would_make_names_ambiguous_are_refused(db, slug, why):
    from django.core.exceptions import ValidationError as ModelValidationError

    with pytest.raises(ModelValidationError, match=why):
        EnvironmentTier(slug=slug, name=slug).full_clean()


def test_onboarding_a_tenant_claims_its_names_on_its_clusters(world):
    tenant = services.onboard_tenant(
        actor=world["admin"],
        slug="ledger",
        name="Ledger",
        groups={"owner": ["ledger"]},
        repo_url="",
        branch="main",
        path="",
        credentials="",
        engine="argocd",
        budget_limits={"cpu_millis": 1000, "memory_mib": 1024, "storage_gib": 1, "namespaces": 2},
        clusters=[world["cluster"]],
        tiers=list(EnvironmentTier.objects.all()),
        allowed_domains=[],
        notify_emails=[],
    )
    assert live("ledger-apps").tenant == tenant


# --- the plan touches only what is claimed for it --------------------------------------------


def test_the_plan_refuses_a_namespace_registered_for_another_purpose(world):
    created = kargo_project(world)
    inputs = plan_input_for(created)
    assert validate_plan(current_plan(created), inputs) == {}
    # As if the project's dev namespace were registered for something else meanwhile.
    NamespaceClaim.objects.filter(name="payments-shop-dev").update(purpose=NamePurpose.KARGO)
    problems = validate_plan(current_plan(created), plan_input_for(created))
    assert any(
        "payments-shop-dev is registered as kargo" in problem
        for found in problems.values()
        for problem in found
    )


def test_a_plan_never_deletes_a_namespace_registered_for_something_else(world):
    """The end of the Kargo takeover: whatever names it, a plan may delete only the
    tenant's own tier, environment or shared namespaces, never the Kargo namespace."""
    inputs = replace(
        plan_input_for(kargo_project(world)),
        namespaces=(),
        remove_namespaces=("payments-shop-kargo",),
    )
    plan = Plan(delete=(ObjectRef("v1", "Namespace", "payments-shop-kargo"),))
    problems = validate_plan(plan, replace(inputs, claims=claims_of(inputs, world["cluster"])))
    assert "registered as kargo of payments" in " ".join(problems["Namespace/payments-shop-kargo"])


def test_a_plan_listing_an_object_twice_is_refused_naming_it(world):
    created = submit(
        world,
        RequestKind.NAMESPACE,
        app="x",
        tier="prod",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    plan = current_plan(created)
    doubled = Plan(apply=plan.apply + plan.apply[:1], delete=plan.delete)
    problems = validate_plan(doubled, plan_input_for(created))
    assert problems == {
        str(ref_of(plan.apply[0])): ["listed twice in the plan: a plan applies each object once"]
    }


# --- the registry's page --------------------------------------------------------------------


def test_platform_admins_see_every_name_with_its_owner(client, world):
    kargo_project(world)
    client.force_login(world["admin"])
    page = client.get("/names/", {"tenant": "payments"}).content.decode()
    assert "payments-shop-kargo" in page
    assert "Kargo project namespace" in page
    assert "payments-apps" in page


def test_the_registry_page_is_for_platform_admins_only(client, world):
    client.force_login(world["developer"])
    assert client.get("/names/").status_code == 403


def test_the_registry_page_makes_a_fixed_number_of_queries(
    client, world, django_assert_max_num_queries
):
    for app in ("a", "b", "c"):
        kargo_project(world, app=app, tiers=("dev",))
    client.force_login(world["admin"])
    with django_assert_max_num_queries(12):
        assert client.get("/names/").status_code == 200


def test_a_request_in_a_final_state_keeps_its_names_released(world):
    created = submit(
        world,
        RequestKind.NAMESPACE,
        app="y",
        tier="prod",
        cluster="sandbox",
        cpu="500m",
        memory="512Mi",
    )
    services.cancel_request(request_id=created.pk, actor=world["developer"])
    assert Request.objects.get(pk=created.pk).state == RequestState.CANCELLED
    assert live("payments-y-prod") is None
    assert NamespaceClaim.objects.filter(name="payments-y-prod").exclude(released_at=None).exists()


# --- namespaces already on the cluster -------------------------------------------------------


def test_namespaces_already_on_a_cluster_are_never_handed_to_a_tenant(world):
    """A namespace someone made by hand before Berth (payments-legacy-dev) is claimed as
    found when the cluster is registered; asking Berth for that name is refused."""
    from kubesandbox import DEFAULT_NAMESPACES
    from portal.sandbox import PLATFORM_NAMESPACES
    from provisioning.jobs import discover_namespaces
    from tests.support.cluster import sign_in_as_berth, stand_in

    with stand_in(
        namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES, "payments-legacy-dev", "monitoring")
    ) as sandbox:
        Cluster.objects.filter(pk=world["cluster"].pk).update(api_url=sandbox.url)
        cluster = Cluster.objects.get(pk=world["cluster"].pk)
        sign_in_as_berth(sandbox, cluster)  # with exactly the chart's rights
        claimed = discover_namespaces(cluster)
    assert "payments-legacy-dev" in claimed and "monitoring" in claimed
    assert "kube-system" not in claimed  # the platform's, claimed at registration already
    assert live("payments-legacy-dev").purpose == NamePurpose.FOUND
    with pytest.raises(InvalidInput) as refused:
        submit(
            world,
            RequestKind.NAMESPACE,
            app="legacy",
            tier="dev",
            cluster="sandbox",
            cpu="500m",
            memory="512Mi",
        )
    assert "was on the cluster before Berth" in errors(refused.value)


def test_registering_a_cluster_asks_the_engine_to_claim_what_is_on_it(world, monkeypatch):
    from django.test import TestCase

    from provisioning import tasks

    queued = []
    monkeypatch.setattr(tasks.discover_namespaces, "delay", queued.append)
    with TestCase.captureOnCommitCallbacks(execute=True):
        cluster = services.save_cluster(
            actor=world["admin"],
            cluster=None,
            values={"name": "east", "api_url": "https://east.example.com:6443"},
        )
    assert queued == [cluster.pk]
    assert live("kube-system") is not None
