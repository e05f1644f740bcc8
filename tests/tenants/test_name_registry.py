"""One owner per namespace name: the registry (tenants.models.NamespaceClaim). What is
claimed and when (a cluster's platform names, each tenant's GitOps namespaces, a request's
names at submission, names found on a cluster), what frees a name, and the registry's
page for platform admins."""

from __future__ import annotations

import pytest

from provisioning.inputs import plan_input_for
from tenants import services
from tenants.choices import NamePurpose, NamespaceState, RequestKind, RequestState
from tenants.errors import InvalidInput
from tenants.models import Cluster, EnvironmentTier, Namespace, NamespaceClaim, Request
from tenants.services.clusters import register_platform_namespaces
from tests.support.tenants_names import errors, kargo_project, live, small_namespace, submit

# --- what is claimed, when ---------------------------------------------------------------


def test_a_cluster_registered_claims_its_platform_namespaces_and_berths(names_world):
    purposes = dict(
        NamespaceClaim.objects.filter(cluster=names_world["cluster"], tenant=None).values_list(
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


def test_registering_a_cluster_again_claims_nothing_twice_and_reads_the_claims_once(
    names_world, django_assert_num_queries
):
    before = NamespaceClaim.objects.count()
    with django_assert_num_queries(1):  # every name held: one read, nothing written
        register_platform_namespaces(names_world["cluster"])
    assert NamespaceClaim.objects.count() == before


def test_a_cluster_setting_naming_a_tenants_namespace_is_refused_and_claims_nothing(names_world):
    cluster = names_world["cluster"]
    cluster.argocd_namespace, cluster.ingress_namespace = "payments-apps", "edge-ingress"
    with pytest.raises(InvalidInput) as refused:
        register_platform_namespaces(cluster)
    assert "payments-apps on sandbox is another tenant's namespace" in str(
        refused.value.field_errors["argocd_namespace"]
    )
    # The refused change took none of its names, the free one neither.
    assert not NamespaceClaim.objects.filter(name="edge-ingress").exists()
    assert live("payments-apps").purpose == NamePurpose.ARGOCD_APPS


def test_every_tenant_holds_its_argocd_and_flux_namespaces_on_its_clusters(names_world):
    for name, purpose in (
        ("payments-apps", NamePurpose.ARGOCD_APPS),
        ("payments-gitops", NamePurpose.GITOPS),
    ):
        claim = live(name)
        assert (claim.purpose, claim.tenant) == (purpose, names_world["tenant"])


def test_a_project_claims_its_tier_namespaces_and_its_kargo_namespace_at_submission(names_world):
    created = kargo_project(names_world)
    assert live("payments-shop-dev").purpose == NamePurpose.TIER
    assert live("payments-shop-dev").request == created
    kargo = live("payments-shop-kargo")
    assert (kargo.purpose, kargo.app, kargo.request) == (NamePurpose.KARGO, "shop", created)


def test_refusing_a_request_frees_its_names_but_not_the_tenants(names_world):
    created = kargo_project(names_world, app="cart", provisioned=False)
    services.reject_request(
        request_id=created.pk, approver=names_world["admin"], reason="Not this quarter."
    )
    assert live("payments-cart-dev") is None
    assert live("payments-cart-kargo") is None
    assert live("payments-apps") is not None
    # ... so the same names can be asked for again.
    kargo_project(names_world, app="cart", provisioned=False)


def test_a_decommissioned_namespace_frees_its_name(names_world):
    from provisioning.records.outcomes import record_outcomes

    ns = Namespace.objects.create(
        name="payments-old-dev",
        tenant=names_world["tenant"],
        cluster=names_world["cluster"],
        tier=EnvironmentTier.objects.get(slug="dev"),
        state=NamespaceState.ACTIVE,
        cpu_millis=100,
        memory_mib=128,
    )
    services.names.claim(
        cluster=names_world["cluster"],
        name=ns.name,
        purpose=NamePurpose.TIER,
        tenant=names_world["tenant"],
        app="old",
        tier="dev",
        namespace=ns,
    )
    decommission = submit(
        names_world,
        RequestKind.DECOMMISSION,
        requester=names_world["owner"],
        namespace=ns.name,
        reason="Gone.",
    )
    record_outcomes(requests=[(decommission, plan_input_for(decommission))])
    assert live("payments-old-dev") is None


# --- the registry's page --------------------------------------------------------------------


def test_platform_admins_see_every_name_with_its_owner(client, names_world):
    kargo_project(names_world)
    client.force_login(names_world["admin"])
    page = client.get("/names/", {"tenant": "payments"}).content.decode()
    assert "payments-shop-kargo" in page
    assert "Kargo project namespace" in page
    assert "payments-apps" in page


def test_the_registry_page_is_for_platform_admins_only(client, names_world):
    client.force_login(names_world["developer"])
    assert client.get("/names/").status_code == 403


def test_the_registry_page_makes_a_fixed_number_of_queries(
    client, names_world, django_assert_max_num_queries
):
    for app in ("a", "b", "c"):
        kargo_project(names_world, app=app, tiers=("dev",))
    client.force_login(names_world["admin"])
    with django_assert_max_num_queries(12):
        assert client.get("/names/").status_code == 200


def test_a_request_in_a_final_state_keeps_its_names_released(names_world):
    created = small_namespace(names_world, app="y", tier="prod")
    services.cancel_request(request_id=created.pk, actor=names_world["developer"])
    assert Request.objects.get(pk=created.pk).state == RequestState.CANCELLED
    assert live("payments-y-prod") is None
    assert NamespaceClaim.objects.filter(name="payments-y-prod").exclude(released_at=None).exists()


# --- namespaces already on the cluster -------------------------------------------------------


def test_namespaces_already_on_a_cluster_are_never_handed_to_a_tenant(names_world):
    """A namespace someone made by hand before Berth (payments-legacy-dev) is claimed as
    found when the cluster is registered; asking Berth for that name is refused."""
    from kubesandbox import DEFAULT_NAMESPACES
    from portal.sandbox import PLATFORM_NAMESPACES
    from provisioning.jobs import discover_namespaces
    from tests.support.cluster import sign_in_as_berth, stand_in

    with stand_in(
        namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES, "payments-legacy-dev", "monitoring")
    ) as sandbox:
        Cluster.objects.filter(pk=names_world["cluster"].pk).update(api_url=sandbox.url)
        cluster = Cluster.objects.get(pk=names_world["cluster"].pk)
        sign_in_as_berth(sandbox, cluster)  # with exactly the chart's rights
        claimed = discover_namespaces(cluster)
    assert "payments-legacy-dev" in claimed and "monitoring" in claimed
    assert "kube-system" not in claimed  # the platform's, claimed at registration already
    assert live("payments-legacy-dev").purpose == NamePurpose.FOUND
    with pytest.raises(InvalidInput) as refused:
        small_namespace(names_world, app="legacy", tier="dev")
    assert "was on the cluster before Berth" in errors(refused.value)


def test_registering_a_cluster_asks_the_engine_to_claim_what_is_on_it(names_world, monkeypatch):
    from django.test import TestCase

    from provisioning import tasks

    queued = []
    monkeypatch.setattr(tasks.discover_namespaces, "delay", queued.append)
    with TestCase.captureOnCommitCallbacks(execute=True):
        cluster = services.save_cluster(
            actor=names_world["admin"],
            cluster=None,
            values={"name": "east", "api_url": "https://east.example.com:6443"},
        )
    assert queued == [cluster.pk]
    assert live("kube-system") is not None
