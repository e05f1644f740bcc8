"""The platform's costs page: any month per tenant, cluster and tier, the figures of the
tenants' own pages, open or closed, in the same number of queries for 3 namespaces or 30."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.models import MonthlyCharge
from tenants.selectors.costs import rounded, tenant_costs
from tenants.services import close_due_months
from tests.support.tenants_showback import namespace

NOVEMBER_1 = datetime(2026, 11, 1, tzinfo=UTC)
DECEMBER_3 = datetime(2026, 12, 3, tzinfo=UTC)


@pytest.fixture
def clock():
    with time_machine.travel(DECEMBER_3, tick=False) as traveller:
        yield traveller


def test_a_platform_admin_reads_a_month_per_tenant_cluster_and_tier(
    api_world, priced, clock, client
):
    namespace(api_world, "payments-a-dev", created=NOVEMBER_1)
    namespace(api_world, "payments-a-prod", created=NOVEMBER_1 + timedelta(days=3), tier="prod")
    client.force_login(api_world.admin)

    page = client.get("/costs/", {"month": "2026-11"}).content.decode()

    total = rounded(tenant_costs(api_world.payments, month=NOVEMBER_1.date()).total)
    assert 'id="month-open"' in page
    assert "<title>Costs November 2026 · Berth</title>" in page
    tenants = page[page.index('id="costs-by-tenant"') :]
    assert f"EUR {total:,.2f}" in tenants
    assert "<code>prod</code>" in page[page.index('id="costs-by-tier"') :]
    assert "sandbox" in page[page.index('id="costs-by-cluster"') :]

    close_due_months()
    closed = client.get("/costs/", {"month": "2026-11"}).content.decode()
    assert 'id="month-closed"' in closed and f"EUR {total:,.2f}" in closed


def test_the_page_costs_the_same_queries_for_three_namespaces_or_thirty(
    api_world, priced, clock, client
):
    client.force_login(api_world.admin)

    def queries(month: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/costs/", {"month": month}).status_code == 200
        return len(captured)

    for index in range(3):
        namespace(api_world, f"payments-a{index}-dev", created=NOVEMBER_1 + timedelta(days=index))
    few = queries("2026-11"), queries("2026-12")
    for index in range(3, 30):
        namespace(api_world, f"payments-a{index}-dev", created=NOVEMBER_1 + timedelta(days=index))
    many = queries("2026-11"), queries("2026-12")

    assert few == many


def test_only_platform_admins_read_it_and_a_bad_month_is_refused(api_world, client):
    client.force_login(api_world.owner)
    assert client.get("/costs/").status_code == 403
    client.force_login(api_world.admin)
    assert client.get("/costs/", {"month": "2026-13"}).status_code == 400


def test_a_tenants_page_costs_the_same_queries_for_three_namespaces_or_thirty(
    api_world, priced, clock, client
):
    """Its Costs section reads this month and six months of history whatever they hold."""
    client.force_login(api_world.member)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/tenants/payments/").status_code == 200
        return len(captured)

    for index in range(3):
        namespace(api_world, f"payments-a{index}-dev", created=NOVEMBER_1 + timedelta(days=index))
    few = queries()
    for index in range(3, 30):
        namespace(api_world, f"payments-a{index}-dev", created=NOVEMBER_1 + timedelta(days=index))
    many = queries()
    close_due_months()
    with_a_closed_month = queries()

    assert few == many, (few, many)
    assert with_a_closed_month == few + 2  # the closed months' rows and adjustments


def test_a_platform_admin_corrects_a_closed_month_on_the_page(api_world, priced, clock, client):
    namespace(api_world, "payments-a-dev", created=NOVEMBER_1)
    close_due_months()
    client.force_login(api_world.admin)
    body = {"tenant": "payments", "amount": "-7.50", "note": "Credit <b>for</b> the outage"}

    response = client.post("/costs/?month=2026-11", body, follow=True)

    page = response.content.decode()
    assert response.redirect_chain[-1][0] == "/costs/?month=2026-11"
    assert "Adjustment of payments&#x27;s November 2026 added." in page
    assert "EUR -7.50" in page[page.index('id="costs-totals"') :]
    tenant_page = client.get("/tenants/payments/?costs_month=2026-11").content.decode()
    adjustments = tenant_page[tenant_page.index('id="costs-adjustments"') :]
    assert "Credit &lt;b&gt;for&lt;/b&gt; the outage" in adjustments


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"amount": "0"}, "An adjustment of nothing changes nothing."),
        ({"amount": "lots"}, "A decimal amount"),
        ({"note": " "}, "This field is required."),
    ],
)
def test_a_bad_adjustment_is_refused_on_the_page_and_nothing_is_saved(
    api_world, priced, clock, client, body, said
):
    namespace(api_world, "payments-a-dev", created=NOVEMBER_1)
    close_due_months()
    client.force_login(api_world.admin)

    response = client.post(
        "/costs/?month=2026-11", {"tenant": "payments", "amount": "5", "note": "x", **body}
    )

    assert response.status_code == 200 and said in response.content.decode()
    assert not MonthlyCharge.objects.filter(kind="adjustment").exists()


def test_only_platform_admins_post_an_adjustment(api_world, priced, clock, client):
    client.force_login(api_world.owner)
    response = client.post("/costs/?month=2026-11", {"tenant": "payments", "amount": "-5"})

    assert response.status_code == 403
    assert not MonthlyCharge.objects.filter(kind="adjustment").exists()
