"""A tenant owns exactly its namespaces: its prefix `<slug>-*` (its Argo CD AppProject's
destinations, its Flux fences, its admission parameters) may not cover a namespace of the
platform, of Berth, found on a cluster, or of another tenant (docs/naming.md).

The world is the demo seed: cluster sandbox registered (its platform namespaces claimed,
ingress-nginx and berth-system among them), tenants payments and search.
"""

from __future__ import annotations

from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants import services
from tenants.choices import NamePurpose
from tenants.errors import InvalidInput
from tenants.models import Cluster, NamespaceClaim, Tenant, User
from tests.support.admin_forms import admin_add_form, onboarding_form
from tests.support.api import api, assert_problem


@pytest.fixture
def sandbox(demo_world) -> Cluster:
    return Cluster.objects.get(name="sandbox")


def onboard(world: dict, slug: str, clusters: list[Cluster] = ()) -> Tenant:
    return services.onboard_tenant(
        actor=world["admin"],
        slug=slug,
        name=slug.title(),
        groups={},
        repo_url="",
        branch="main",
        path="",
        credentials="",
        engine="argocd",
        budget_limits={"cpu_millis": 4000, "memory_mib": 8192, "storage_gib": 50, "namespaces": 5},
        clusters=list(clusters),
        tiers=[],
        allowed_domains=[],
        notify_emails=[],
    )


def slug_error(world: dict, slug: str, clusters: list[Cluster] = ()) -> str:
    with pytest.raises(InvalidInput) as refused:
        onboard(world, slug, clusters)
    assert set(refused.value.field_errors) == {"slug"}
    return str(refused.value.field_errors["slug"])


# --- a slug is refused for what its prefix would cover --------------------------------------


def test_ingress_is_refused_because_ingress_nginx_is_on_a_registered_cluster(demo_world, sandbox):
    message = slug_error(demo_world, "ingress", [sandbox])
    assert "would cover ingress-nginx on cluster sandbox, which belongs to the platform" in message
    assert not Tenant.objects.filter(slug="ingress").exists()


def test_berth_is_refused_because_berth_system_is_berths_own(demo_world):
    assert "would cover berth-system" in slug_error(demo_world, "berth")


def test_berths_own_namespace_is_kept_whatever_it_is_called(demo_world, settings):
    """No cluster holds it yet: Berth's namespace is refused from its setting alone."""
    settings.BERTH_NAMESPACE = "platform-berth"
    assert "would cover platform-berth, which is Berth's own namespace" in slug_error(
        demo_world, "platform"
    )


def test_a_namespace_found_on_a_cluster_refuses_the_slug_that_would_cover_it(demo_world, sandbox):
    """harbor-core is on no list: it is refused because registration found it there."""
    onboard(demo_world, "harbor")  # nothing is called harbor-* yet
    Tenant.objects.filter(slug="harbor").delete()
    services.names.claim_found_namespaces(sandbox, ["harbor-core"])
    assert (
        "would cover harbor-core on cluster sandbox, which was on the cluster before Berth"
        in slug_error(demo_world, "harbor")
    )


@pytest.mark.parametrize(
    "slug, said",
    [
        ("cert", "would cover cert-manager"),
        ("flux-system", "is flux-system"),
        ("ingress-nginx", "is ingress-nginx"),
        ("berth-system", "is berth-system"),
        ("monitoring", "is monitoring"),
        ("istio", "would cover istio-ingress"),
        ("metallb", "would cover metallb-system"),
    ],
)
def test_a_slug_that_is_or_would_cover_a_well_known_platform_namespace_is_refused(
    demo_world, slug, said
):
    """No cluster holds cert-manager yet: once the platform installs it, `cert-*` would
    reach it, so `cert` is refused before then."""
    message = slug_error(demo_world, slug)

    assert f"{slug!r} {said}, a namespace platforms commonly install into" in message
    assert not Tenant.objects.filter(slug=slug).exists()


def test_a_namespace_labelled_as_berths_that_the_registry_never_held_is_claimed_and_covered(
    demo_world, sandbox
):
    """A label is anyone's to set (or another Berth's): the one Berth made stays its
    tenant's, the other is claimed as found when the cluster's namespaces are listed, and
    refuses the slug that would cover it."""
    from provisioning.jobs import discover_namespaces
    from provisioning.plan import MANAGED_BY
    from tests.support.cluster import as_admin, sign_in_as_berth, stand_in

    services.names.claim(
        cluster=sandbox,
        name="payments-shop-dev",
        purpose=NamePurpose.TIER,
        tenant=demo_world["tenant"],
        app="shop",
        tier="dev",
    )
    with stand_in() as kube:
        Cluster.objects.filter(pk=sandbox.pk).update(api_url=kube.url)
        cluster = Cluster.objects.get(pk=sandbox.pk)
        sign_in_as_berth(kube, cluster)
        for name in ("payments-shop-dev", "orders-shop-dev"):
            as_admin(
                kube,
                "POST",
                "/api/v1/namespaces",
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": name, "labels": {MANAGED_BY: "berth"}},
                },
            )
        claimed = discover_namespaces(cluster)
    assert "orders-shop-dev" in claimed and "payments-shop-dev" not in claimed
    assert NamespaceClaim.objects.get(name="payments-shop-dev").tenant == demo_world["tenant"]
    assert (
        "would cover orders-shop-dev on cluster sandbox, which was on the cluster before"
        in slug_error(demo_world, "orders")
    )


def test_a_slug_covering_another_tenants_environment_is_refused_without_naming_it(
    demo_world, sandbox
):
    """search once went by legacy (renamed in the admin); its environment's namespace kept
    the old name. A new tenant legacy would reach it."""
    search = Tenant.objects.get(slug="search")
    NamespaceClaim.objects.create(
        cluster=sandbox,
        name="legacy-web-review-1",
        purpose=NamePurpose.EPHEMERAL,
        tenant=search,
        app="web",
        environment="review-1",
    )
    message = slug_error(demo_world, "legacy")
    assert (
        "would cover legacy-web-review-1 on cluster sandbox, which is another tenant's" in message
    )
    assert "search" not in message


def test_a_harmless_slug_is_accepted(demo_world, sandbox):
    tenant = onboard(demo_world, "ledger", [sandbox])
    assert NamespaceClaim.objects.get(name="ledger-apps", released_at=None).tenant == tenant


def test_a_name_merely_sharing_letters_is_not_covered(demo_world, sandbox):
    """ingressive- covers nothing of ingress-nginx: only `<slug>-` counts."""
    assert onboard(demo_world, "ingressive", [sandbox]).slug == "ingressive"


# --- every boundary refuses alike ----------------------------------------------------------


def test_the_api_refuses_with_a_400_naming_slug_and_stores_nothing(demo_world, sandbox):
    claims = NamespaceClaim.objects.count()
    response = api(demo_world["admin"]).post(
        "/api/v1/tenants/",
        {"slug": "ingress", "name": "Ingress team", "allowed_clusters": ["sandbox"]},
        format="json",
    )
    errors = assert_problem(response, 400, "validation-error")["errors"]
    assert set(errors) == {"slug"}
    assert "ingress-nginx on cluster sandbox" in str(errors["slug"])
    assert not Tenant.objects.filter(slug="ingress").exists()
    assert NamespaceClaim.objects.count() == claims
    assert not NamespaceClaim.objects.filter(name__in=("ingress-apps", "ingress-gitops")).exists()


def test_the_onboarding_form_shows_the_error_on_the_slug(client, demo_world):
    client.force_login(demo_world["admin"])
    page = unescape(
        client.post(
            "/tenants/new/", onboarding_form(slug="berth", name="Berth fans")
        ).content.decode()
    )
    assert "would cover berth-system" in page
    assert 'value="Berth fans"' in page
    assert not Tenant.objects.filter(slug="berth").exists()


def test_the_admin_refuses_the_slug_on_its_field(client, demo_world):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-unused"))
    response = client.post(
        "/admin/tenants/tenant/add/",
        admin_add_form(slug="ingress", name="Ingress team", gitops_repo_url=""),
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "ingress-nginx on cluster sandbox" in " ".join(errors["slug"]), errors
    assert not Tenant.objects.filter(slug="ingress").exists()


# --- a name that comes under a prefix later is reported ------------------------------------


def names_page(client, world: dict, **query: str) -> str:
    """The Names page as the platform admin reads it."""
    client.force_login(world["admin"])
    return unescape(client.get("/names/", query).content.decode())


def test_a_platform_namespace_appearing_inside_a_tenants_prefix_shows_on_the_names_page(
    client, demo_world, sandbox
):
    """The cluster's ingress controller is moved to search-ingress after search was
    onboarded: the platform claims it, and the Names page says it sits inside search's prefix
    (search's fences name its namespaces, so they do not reach it)."""
    services.save_cluster(
        actor=demo_world["admin"], cluster=sandbox, values={"ingress_namespace": "search-ingress"}
    )
    page = names_page(client, demo_world)
    assert (
        "search-ingress (platform) on sandbox is inside tenant search's prefix search-*: "
        "it reads as the tenant's. The tenant's AppProject and RBAC name its namespaces "
        "and do not reach it."
    ) in page


def test_a_namespace_found_inside_a_prefix_shows_on_the_names_page(client, demo_world, sandbox):
    services.names.claim_found_namespaces(sandbox, ["payments-legacy-dev"])
    page = names_page(client, demo_world, tenant="search")
    assert (
        "payments-legacy-dev (found on the cluster) on sandbox is inside tenant payments's" in page
    )


def test_a_name_another_tenant_holds_inside_a_prefix_shows_on_the_names_page(
    client, demo_world, sandbox
):
    """search kept a name from before a slug change that payments' prefix covers."""
    NamespaceClaim.objects.create(
        cluster=sandbox,
        name="payments-web-review-1",
        purpose=NamePurpose.EPHEMERAL,
        tenant=Tenant.objects.get(slug="search"),
        app="web",
        environment="review-1",
    )
    page = names_page(client, demo_world)
    assert (
        "payments-web-review-1 (tenant search's) on sandbox is inside tenant payments's "
        "prefix payments-*"
    ) in page


def test_the_names_page_reports_nothing_when_every_prefix_holds_only_its_own(client, demo_world):
    assert "inside tenant" not in names_page(client, demo_world)


def test_a_tenant_whose_prefix_came_to_cover_a_platform_namespace_can_still_be_changed(
    demo_world, sandbox
):
    services.names.claim_found_namespaces(sandbox, ["payments-legacy-dev"])
    tenant = services.update_tenant(
        actor=demo_world["admin"],
        tenant=demo_world["tenant"],
        changes={"name": "Payments and billing"},
    )
    assert tenant.name == "Payments and billing"


def test_the_names_page_costs_the_same_queries_however_many_names_it_reports(
    client, demo_world, sandbox
):
    client.force_login(demo_world["admin"])

    def queries_reporting(names: list[str]) -> int:
        services.names.claim_found_namespaces(sandbox, names)
        with CaptureQueriesContext(connection) as queries:
            page = client.get("/names/").content.decode()
        assert all(f'data-name="{name}"' in page for name in names)
        return len(queries)

    one = queries_reporting(["payments-old"])
    assert (
        queries_reporting(
            [f"{slug}-old{index}" for index in range(5) for slug in ("payments", "search")]
        )
        == one
    )
