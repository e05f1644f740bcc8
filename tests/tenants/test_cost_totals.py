"""The dashboard's costs card sums in the database (tenants.selectors.cost_totals): the
same figures as each tenant's page, in the same number of queries for three namespaces or
thirty."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.choices import NamespaceState, RequestKind, RequestState
from tenants.models import (
    Cluster,
    ClusterPrice,
    EphemeralEnvironment,
    Project,
    Request,
    Tenant,
)
from tenants.selectors.cost_totals import totals_by_tenant
from tenants.selectors.costs import rounded, tenant_costs
from tenants.services import allocations, close_due_months
from tenants.services.prices import SINCE_ALWAYS
from tests.support.tenants_showback import NOW, namespace, removed


@pytest.fixture
def clock():
    with time_machine.travel(NOW + timedelta(hours=15, minutes=20), tick=False) as traveller:
        yield traveller


def a_month_of_everything(api_world):
    """Namespaces of two tenants on three clusters (one unpriced, one in dollars): held
    since last month, made this month and today, removed this month and last month,
    an environment's that ended this month."""
    dollars = Cluster.objects.create(name="west", api_url="https://west.example:6443")
    ClusterPrice.objects.create(
        cluster=dollars,
        effective_from=SINCE_ALWAYS,
        currency="USD",
        cpu_core_hour=Decimal("0.031"),
        namespace_month=1,
    )
    Cluster.objects.create(name="bare", api_url="https://bare.example:6443")
    namespace(api_world, "payments-old-dev", created=NOW - timedelta(days=40))
    namespace(api_world, "payments-new-dev", created=NOW - timedelta(days=3, minutes=7))
    namespace(api_world, "payments-today-dev", created=NOW + timedelta(hours=2, seconds=5))
    namespace(api_world, "payments-west-dev", created=NOW - timedelta(days=20), cluster="west")
    namespace(api_world, "payments-bare-dev", created=NOW - timedelta(days=2), cluster="bare")
    namespace(api_world, "payments-wait-dev", created=NOW, state=NamespaceState.REQUESTED)
    went = NamespaceState.DECOMMISSIONED
    gone = namespace(api_world, "payments-gone-dev", created=NOW - timedelta(days=50), state=went)
    removed(api_world, gone, finished=NOW - timedelta(days=4, hours=3))
    earlier = namespace(
        api_world, "payments-earlier-dev", created=NOW - timedelta(days=60), state=went
    )
    removed(api_world, earlier, finished=NOW - timedelta(days=30))
    review = namespace(
        api_world,
        "payments-shop-review-1",
        tier="review",
        created=NOW - timedelta(days=2),
        state=went,
    )
    EphemeralEnvironment.objects.create(
        tenant=api_world.payments,
        project=Project.objects.create(tenant=api_world.payments, name="shop"),
        request=Request.objects.create(
            tenant=api_world.payments,
            kind=RequestKind.EPHEMERAL,
            payload={},
            requester=api_world.member,
            state=RequestState.READY,
        ),
        slug="review-1",
        namespace=review,
        owns_namespace=True,
        expires_at=NOW,
        max_expires_at=NOW,
        ended_at=NOW - timedelta(hours=30),
    )
    allocations.record_released([review.pk], at=NOW - timedelta(hours=30))
    search = Tenant.objects.get(slug="search")
    namespace(api_world, "search-idx-dev", created=NOW - timedelta(days=9), tenant=search)


def test_the_card_gives_each_tenant_the_figures_of_its_own_page(api_world, priced, clock):
    a_month_of_everything(api_world)
    tenants = list(Tenant.objects.order_by("slug"))

    lines = {line.tenant.slug: line for line in totals_by_tenant(tenants)}

    for tenant in tenants:
        page = tenant_costs(tenant)
        line = lines[tenant.slug]
        assert (line.count, line.currency, line.unpriced_clusters) == (
            len(page.namespaces),
            page.currency,
            page.unpriced_clusters,
        )
        assert (rounded(line.total), rounded(line.today)) == (
            rounded(page.total),
            rounded(page.today),
        )
    payments = lines["payments"]
    # old, new, today, west; gone (removed this month) and the review environment's; not
    # the one removed last month, nor bare's, nor the waiting one.
    assert payments.count == 6 and payments.unpriced_clusters == ["bare"]
    assert payments.total > lines["search"].total > 0 and payments.today > 0


def test_a_past_month_gives_the_figures_of_its_page_too(api_world, priced, clock):
    a_month_of_everything(api_world)
    tenants = list(Tenant.objects.order_by("slug"))
    october = (NOW - timedelta(days=30)).date().replace(day=1)

    for line in totals_by_tenant(tenants, month=october):
        page = tenant_costs(line.tenant, month=october)
        assert line.count == len(page.namespaces)
        assert rounded(line.total) == rounded(page.total) and line.today == page.today == 0


def test_the_card_costs_the_same_queries_for_three_namespaces_or_thirty(
    api_world, priced, clock, client
):
    client.force_login(api_world.admin)

    def dashboard_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/dashboard/").status_code == 200
        return len(queries)

    def card_queries() -> int:
        tenants = list(Tenant.objects.all())
        with CaptureQueriesContext(connection) as queries:
            totals_by_tenant(tenants)
        return len(queries)

    for index in range(3):
        namespace(api_world, f"payments-a{index}-dev", created=NOW - timedelta(days=index))
    dashboard_queries()
    few, few_card = dashboard_queries(), card_queries()
    for index in range(3, 30):
        namespace(api_world, f"payments-a{index}-dev", created=NOW - timedelta(days=index))
    dashboard_queries()
    many, many_card = dashboard_queries(), card_queries()

    assert few == many and few_card == many_card <= 4
    page = client.get("/dashboard/").content.decode()
    card = page[page.index('id="costs-card"') :]
    assert '<td class="num">30</td>' in card


def test_a_closed_month_gives_the_figures_of_its_page_too(api_world, priced, clock):
    a_month_of_everything(api_world)
    tenants = list(Tenant.objects.order_by("slug"))
    october = (NOW - timedelta(days=30)).date().replace(day=1)
    before = [
        (line.count, rounded(line.total)) for line in totals_by_tenant(tenants, month=october)
    ]

    assert close_due_months()
    lines = totals_by_tenant(tenants, month=october)

    assert [(line.count, rounded(line.total)) for line in lines] == before
    for line in lines:
        page = tenant_costs(line.tenant, month=october)
        assert page.closed and rounded(line.total) == rounded(page.total)
