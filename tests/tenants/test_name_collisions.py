"""Two owners for one namespace name are refused, each time naming what holds it: two long
names shortened alike, another tenant's name (without its details), the same namespace
asked twice, a race caught by the database; and cluster, tier and tenant settings that
would take or blur a tenant's names."""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import NamePurpose
from tenants.errors import InvalidInput
from tenants.models import Cluster, EnvironmentTier, NamespaceClaim, Tenant
from tenants.naming import namespace_name
from tests.support.tenants_names import errors, live, small_namespace

# --- collisions ---------------------------------------------------------------------------


def test_a_name_collision_is_refused_as_such_naming_the_other_owner(names_world):
    """Two long app names shortened to the same name: the second is told what holds it,
    not that it was 'already requested'."""
    app = "a-very-long-application-name-for-the-quarterly-reports"
    name = namespace_name("payments", app, "dev")
    NamespaceClaim.objects.create(
        cluster=names_world["cluster"],
        name=name,
        purpose=NamePurpose.TIER,
        tenant=names_world["tenant"],
        app=app + "-other",
        tier="dev",
    )
    with pytest.raises(InvalidInput) as refused:
        small_namespace(names_world, app=app, tier="dev")
    message = errors(refused.value)
    assert f"{name} on sandbox is the dev namespace of {app}-other" in message
    assert "already requested" not in message


def test_another_tenants_name_is_refused_without_its_details(names_world):
    search = Tenant.objects.get(slug="search")
    NamespaceClaim.objects.create(
        cluster=names_world["cluster"],
        name="payments-x-dev",
        purpose=NamePurpose.TIER,
        tenant=search,
        app="x",
        tier="dev",
    )
    with pytest.raises(InvalidInput) as refused:
        small_namespace(names_world, app="x", tier="dev")
    assert "payments-x-dev on sandbox is another tenant's namespace" in errors(refused.value)
    assert "search" not in errors(refused.value)


def test_the_same_namespace_asked_twice_is_already_requested(names_world):
    first = small_namespace(names_world, app="x", tier="prod")
    with pytest.raises(InvalidInput) as refused:
        small_namespace(names_world, app="x", tier="prod")
    assert f"payments-x-prod is already requested (request #{first.pk})" in errors(refused.value)


def test_a_concurrent_claim_is_caught_by_the_database(names_world):
    """The registry's unique constraint is the backstop when a check raced a claim."""
    from django.db import IntegrityError, transaction

    NamespaceClaim.objects.create(
        cluster=names_world["cluster"],
        name="payments-race",
        purpose=NamePurpose.SHARED,
        tenant=names_world["tenant"],
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        NamespaceClaim.objects.create(
            cluster=names_world["cluster"],
            name="payments-race",
            purpose=NamePurpose.TIER,
            tenant=names_world["tenant"],
        )


# --- cluster, tier and tenant settings ------------------------------------------------------


def test_a_cluster_setting_naming_a_tenant_namespace_is_refused(names_world):
    small_namespace(names_world, app="x", tier="prod")
    with pytest.raises(InvalidInput) as refused:
        services.save_cluster(
            actor=names_world["admin"],
            cluster=names_world["cluster"],
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


def test_onboarding_a_tenant_claims_its_names_on_its_clusters(names_world):
    tenant = services.onboard_tenant(
        actor=names_world["admin"],
        slug="ledger",
        name="Ledger",
        groups={"owner": ["ledger"]},
        repo_url="",
        branch="main",
        path="",
        credentials="",
        engine="argocd",
        budget_limits={"cpu_millis": 1000, "memory_mib": 1024, "storage_gib": 1, "namespaces": 2},
        clusters=[names_world["cluster"]],
        tiers=list(EnvironmentTier.objects.all()),
        allowed_domains=[],
        notify_emails=[],
    )
    assert live("ledger-apps").tenant == tenant
