"""Request, namespace and tenant pages: what people see, and who may see it."""

import pytest

from provisioning import reconcile
from tenants.choices import RequestState
from tenants.models import Cluster, EnvironmentTier, Namespace, Project, Request, Tenant
from tenants.selectors import review
from tests.support.factories import TenantFactory
from tests.support.tenants_pages import approve
from tests.support.workflow import ask_for_environment, ask_for_namespace


def dev_namespace(name: str, tenant: Tenant, **fields) -> Namespace:
    """A namespace in the dev tier on the sandbox cluster."""
    return Namespace.objects.create(
        name=name,
        tenant=tenant,
        tier=EnvironmentTier.objects.get(slug="dev"),
        cluster=Cluster.objects.get(name="sandbox"),
        **fields,
    )


def test_requester_sees_the_plan_and_history_of_their_request(client, demo_world, submitted):
    client.force_login(demo_world["developer"])
    page = client.get(f"/requests/{submitted.pk}/").content.decode()

    assert "kind: ResourceQuota" in page
    assert review(submitted).digest in page
    assert "submitted the request" in page
    assert "Retry provisioning" not in page


@pytest.mark.parametrize("path", ["/requests/{pk}/", "/requests/{pk}/progress/"])
def test_member_of_another_tenant_gets_404(client, demo_world, submitted, path):
    client.force_login(demo_world["outsider"])
    assert client.get(path.format(pk=submitted.pk)).status_code == 404


def test_other_tenants_namespace_and_tenant_pages_are_404(client, demo_world):
    namespace = dev_namespace(
        "payments-shop-dev", demo_world["tenant"], cpu_millis=1000, memory_mib=1024
    )
    client.force_login(demo_world["outsider"])
    assert client.get(f"/namespaces/{namespace.pk}/").status_code == 404
    assert client.get("/tenants/payments/").status_code == 404
    assert client.get("/tenants/search/").status_code == 200


def test_progress_polls_while_approved_and_stops_when_finished(
    client, demo_world, submitted, settings
):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    approve(demo_world, submitted)
    client.force_login(demo_world["developer"])
    assert 'data-poll="' in client.get(f"/requests/{submitted.pk}/progress/").content.decode()

    reconcile.converge(request_id=submitted.pk, worker="w")  # cluster unreachable → waits
    fragment = client.get(f"/requests/{submitted.pk}/progress/").content.decode()
    assert 'data-poll="' in fragment  # still moving, by itself
    assert "Waiting: sandbox: cluster unreachable" in fragment
    assert "next try at" in fragment and "nothing is lost" in fragment

    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 0  # past its deadline, the next try gives up
    Request.objects.filter(pk=submitted.pk).update(lease_expires_at=None)
    reconcile.converge(request_id=submitted.pk, worker="w")

    fragment = client.get(f"/requests/{submitted.pk}/progress/").content.decode()
    assert "data-poll=" not in fragment
    assert "cluster unreachable" in fragment and "Waiting:" not in fragment
    assert "failed" in fragment


def test_only_platform_admins_get_and_may_use_the_retry_button(client, demo_world, submitted):
    approve(demo_world, submitted)
    reconcile.converge(request_id=submitted.pk, worker="w")
    client.force_login(demo_world["developer"])
    assert "Retry provisioning" not in client.get(f"/requests/{submitted.pk}/").content.decode()
    assert client.post(f"/requests/{submitted.pk}/retry/").status_code == 403

    client.force_login(demo_world["admin"])
    assert "Retry provisioning" in client.get(f"/requests/{submitted.pk}/").content.decode()
    response = client.post(f"/requests/{submitted.pk}/retry/")

    assert response.status_code == 302
    submitted.refresh_from_db()
    assert submitted.state == RequestState.PROVISIONING
    assert submitted.runs.count() == 2


def test_namespace_page_shows_drift_findings(client, demo_world):
    namespace = dev_namespace(
        "payments-shop-dev",
        demo_world["tenant"],
        cpu_millis=1000,
        memory_mib=1024,
        state="active",
        drift=[
            {
                "object": "NetworkPolicy/payments-shop-dev/berth-allow-dns",
                "status": "missing",
                "detail": "",
            }
        ],
        drift_checked_at="2026-11-22T10:00:00Z",
    )
    client.force_login(demo_world["developer"])
    page = client.get(f"/namespaces/{namespace.pk}/").content.decode()
    assert "NetworkPolicy/payments-shop-dev/berth-allow-dns" in page
    assert "missing" in page


@pytest.mark.parametrize("rows", [1, 8])
def test_tenant_page_query_count_does_not_grow_with_rows(
    client, demo_world, django_assert_max_num_queries, rows
):
    tenant = TenantFactory(slug="busy")
    demo_world["tenant"].budget_namespaces = 50  # room for a namespace per environment too
    demo_world["tenant"].save(update_fields=["budget_namespaces"])
    for index in range(rows):
        dev_namespace(f"busy-app{index}-dev", tenant, cpu_millis=100, memory_mib=128)
        ask_for_namespace(
            demo_world["tenant"],
            demo_world["developer"],
            app=f"a{index}",
            cpu="100m",
            memory="128Mi",
        )
        Project.objects.create(tenant=demo_world["tenant"], name=f"p{index}")
        ask_for_environment(
            demo_world["tenant"],
            demo_world["developer"],
            project=f"p{index}",
            env_slug=f"review-{index}",
            cpu="100m",
            memory="128Mi",
        )
    client.force_login(demo_world["admin"])
    # 10: the ephemeral environments card is one query (select_related), whatever its rows;
    # the namespaces using most of the budget another; the costs section four for this
    # month and six months of history together (which of them are closed, the clusters'
    # prices, the allocations, its environments' expiries); the budget alerts card two.
    with django_assert_max_num_queries(16):
        assert client.get("/tenants/busy/").status_code == 200
    with django_assert_max_num_queries(16):
        assert client.get("/tenants/payments/").status_code == 200


def test_plan_preview_shows_the_gitops_diff_against_the_tenants_repo(client, demo_world, tmp_path):
    from tests.support.gitserver import init_bare

    bare = init_bare(tmp_path / "payments.git")
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=f"file://{bare}")
    payments = Tenant.objects.get(slug="payments")  # with the repository URL just set
    tenancy_request = ask_for_namespace(
        payments, demo_world["developer"], app="shop", tier="prod", cpu="1", memory="1Gi"
    )
    client.force_login(demo_world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()

    assert "What approval will commit" in page
    assert "+++ b/apps/shop/prod/" in page


def test_plan_preview_explains_an_unreadable_repository(client, demo_world, submitted, tmp_path):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=f"file://{tmp_path}/missing.git")
    client.force_login(demo_world["admin"])
    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    assert "The tenant&#x27;s repository could not be read" in page
