"""Tenant budgets: the meter on the tenant page, the API's `budget`, and admission under
concurrency (requests that together exceed the budget never all get in)."""

from __future__ import annotations

import threading
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.db.models import Sum

from tenants import budget, quantities, selectors
from tenants.choices import NamespaceState, RequestState
from tenants.errors import InvalidInput
from tenants.models import Namespace, Request, Tenant
from tests.support.api import api, assert_problem
from tests.support.budget import live_namespace, set_budget
from tests.support.factories import (
    MembershipFactory,
    TenantFactory,
    UserFactory,
)
from tests.support.workflow import ask_for_namespace


def ask(tenant: Tenant, requester, app: str, cpu: str, memory: str = "256Mi") -> Request:
    """A dev namespace request (the default rules approve dev automatically)."""
    return ask_for_namespace(tenant, requester, app=app, cpu=cpu, memory=memory)


@pytest.fixture
def used_tenant(tenant, developer):
    """payments: 4 CPU, 8Gi, 20Gi, 2 namespaces; one live namespace, one request claiming
    another, and one torn-down namespace that no longer counts."""
    set_budget(tenant, cpu_millis=4000, memory_mib=8192, storage_gib=20, namespaces=2)
    live_namespace(tenant, "web-dev", cpu_millis=1500, memory_mib=2048, storage_gib=10)
    live_namespace(
        tenant,
        "old-dev",
        state=NamespaceState.DECOMMISSIONED,
        cpu_millis=4000,
        memory_mib=8192,
        storage_gib=20,
    )
    ask(tenant, developer, "api", cpu="2", memory="1Gi")
    return tenant


class BudgetCard(HTMLParser):
    """The budget card as a reader meets it: each bar's parts, each row's label and texts."""

    def __init__(self) -> None:
        super().__init__()
        self.bars: dict[str, dict[str, str]] = {}
        self.texts: dict[str, str] = {}
        self.parts: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self._into: tuple[dict[str, str], str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        if self._into is not None:
            self._depth += 1
        elif tag == "svg" and attrs.get("class") == "budget-bar":
            self.bars[attrs["id"].removeprefix("budget-")] = attrs
        elif attrs.get("class") in ("budget-label", "budget-text", "budget-parts"):
            target = {
                "budget-label": self.labels,
                "budget-text": self.texts,
                "budget-parts": self.parts,
            }[attrs["class"]]
            key = attrs["id"].removeprefix("budget-").rsplit("-", 1)[0]
            self._into, self._depth = (target, key), 1

    def handle_endtag(self, tag: str) -> None:
        if self._into is not None:
            self._depth -= 1
            if self._depth == 0:
                self._into = None

    def handle_data(self, data: str) -> None:
        if self._into is not None:
            target, key = self._into
            target[key] = target.get(key, "") + data

    def close(self) -> None:
        super().close()
        for found in (self.texts, self.labels, self.parts):
            found.update({key: " ".join(text.split()) for key, text in found.items()})


def budget_card(client, slug: str) -> BudgetCard:
    response = client.get(f"/tenants/{slug}/")
    assert response.status_code == 200
    card = BudgetCard()
    card.feed(response.content.decode())
    card.close()
    return card


# --- the tenant page ----------------------------------------------------------------------


def test_tenant_page_shows_a_bar_per_budget_dimension_with_the_numbers(
    client, used_tenant, developer
):
    client.force_login(developer)
    card = budget_card(client, used_tenant.slug)

    assert card.labels == {
        "cpu": "CPU",
        "memory": "Memory",
        "storage": "Storage",
        "namespaces": "Namespaces",
    }
    assert card.texts["cpu"] == "3.5 of 4 cores (0.5 left)"
    assert card.texts["memory"] == "3 of 8 GiB (5 left)"
    assert card.texts["storage"] == "10 of 20 GiB (10 left)"
    assert card.texts["namespaces"] == "2 of 2 namespaces (0 left) 100% used"
    # In use: the live namespace; requested: the one the pending request claims.
    assert card.parts["cpu"] == "in use 1.5, requested 2, left 0.5 of 4 cores"
    assert card.parts["memory"] == "in use 2, requested 1, left 5 of 8 GiB"
    assert card.parts["namespaces"] == "in use 1, requested 1, left 0 of 2 namespaces"
    cpu = card.bars["cpu"]
    assert (cpu["data-live"], cpu["data-requested"]) == ("37.5", "50.0")
    assert cpu["role"] == "img"
    assert cpu["aria-labelledby"] == "budget-cpu-label budget-cpu-parts"


def test_tenant_page_lists_the_namespaces_using_most_of_the_budget(client, used_tenant, developer):
    live_namespace(used_tenant, "tiny-dev", cpu_millis=100, memory_mib=128)
    client.force_login(developer)
    page = client.get(f"/tenants/{used_tenant.slug}/").content.decode()
    table = page.split('id="using-most"')[1].split("</table>")[0]
    rows = [row for row in table.split("<tr>")[2:]]

    # api-dev claims half the CPU, web-dev half the storage; tiny-dev 2.5 % of the CPU.
    assert [
        "payments-api-dev" in rows[0],
        "payments-web-dev" in rows[1],
        "payments-tiny-dev" in rows[2],
    ] == [True, True, True]
    assert [row.count("50%") for row in rows[:2]] == [1, 1] and "3%" in rows[2]
    assert "(requested)" in rows[0] and "(requested)" not in rows[1]
    assert "payments-old-dev" not in table  # torn down: it holds nothing any more


def test_only_a_dimension_at_ninety_percent_or_more_is_flagged(client, used_tenant, developer):
    client.force_login(developer)
    rows = {row["key"]: row for row in selectors.budget_summary(used_tenant)}
    assert {key: row["near_limit"] for key, row in rows.items()} == {
        "cpu": False,
        "memory": False,
        "storage": False,
        "namespaces": True,
    }
    assert rows["cpu"]["percent"] == 87

    set_budget(used_tenant, cpu_millis=3800)  # 3500m of 3800m is 92 %
    card = budget_card(client, used_tenant.slug)
    assert card.texts["cpu"] == "3.5 of 3.8 cores (0.3 left) 92% used"


def test_the_budget_costs_the_same_queries_however_many_namespaces(
    tenant, django_assert_num_queries
):
    with django_assert_num_queries(2):  # one aggregate, one look for pending quota changes
        selectors.budget_summary(tenant)
    for index in range(10):
        live_namespace(tenant, f"app{index}-dev", cpu_millis=100, memory_mib=128)
    with django_assert_num_queries(2):
        rows = selectors.budget_summary(tenant)
    assert rows[0]["used"] == "1"


# --- the REST API -------------------------------------------------------------------------


def test_api_tenant_detail_includes_the_budget_in_quantities(used_tenant, developer):
    body = api(developer).get(f"/api/v1/tenants/{used_tenant.slug}/").json()

    assert body["budget"] == {
        "cpu": {"used": "3500m", "in_use": "1500m", "requested": "2", "total": "4", "left": "500m"},
        "memory": {
            "used": "3Gi",
            "in_use": "2Gi",
            "requested": "1Gi",
            "total": "8Gi",
            "left": "5Gi",
        },
        "storage": {
            "used": "10Gi",
            "in_use": "10Gi",
            "requested": "0Gi",
            "total": "20Gi",
            "left": "10Gi",
        },
        "namespaces": {"used": 2, "in_use": 1, "requested": 1, "total": 2, "left": 0},
    }


def test_api_tenant_list_leaves_the_budget_out(used_tenant, developer):
    body = api(developer).get("/api/v1/tenants/").json()
    assert [tenant["slug"] for tenant in body["results"]] == [used_tenant.slug]
    assert "budget" not in body["results"][0]


def test_a_member_of_another_tenant_cannot_see_the_budget(used_tenant):
    stranger = MembershipFactory(
        tenant=TenantFactory(slug="search"), user=UserFactory(username="sam")
    ).user

    response = api(stranger).get(f"/api/v1/tenants/{used_tenant.slug}/")

    body = assert_problem(response, 404, "not-found")
    assert "3500m" not in response.content.decode() and "budget" not in body


# --- admission under concurrency ----------------------------------------------------------

THREADS = 10
postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="concurrent admission relies on row locks (SELECT … FOR UPDATE), which SQLite "
    "does not have: its shared in-memory test database answers 9 of 10 concurrent writers "
    "with 'database table is locked'. Runs on PostgreSQL (set DATABASE_URL)",
)


def submit_at_once(tenant: Tenant, requester, sizes: list[str]) -> list[tuple[str, object]]:
    """Submit one dev namespace request per size, each from its own thread, all released
    together; returns (outcome, detail) per size in order."""
    barrier = threading.Barrier(len(sizes))
    outcomes: list[tuple[str, object]] = [("not run", None)] * len(sizes)

    def one(index: int, cpu: str) -> None:
        try:
            own_tenant = Tenant.objects.get(pk=tenant.pk)
            barrier.wait(timeout=30)
            try:
                created = ask(own_tenant, requester, f"app{index}", cpu=cpu)
            except InvalidInput as refused:
                outcomes[index] = ("refused", refused.field_errors)
            else:
                outcomes[index] = ("admitted", created.pk)
        except Exception as exc:
            outcomes[index] = ("error", repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(index, cpu)) for index, cpu in enumerate(sizes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a submission hung"
    return outcomes


def assert_within_budget(tenant: Tenant) -> int:
    """Nothing admitted went past the budget, by the requests, the claims and usage()."""
    approved = Request.objects.filter(tenant=tenant, state=RequestState.APPROVED)
    approved_cpu = sum(item.payload["cpu_millis"] for item in approved)
    claimed_cpu = (
        Namespace.objects.filter(tenant=tenant, state__in=budget.COUNTED_STATES).aggregate(
            total=Sum("cpu_millis")
        )["total"]
        or 0
    )
    used, limit = budget.usage(tenant), budget.limits(tenant)
    assert approved_cpu == claimed_cpu == used.cpu_millis
    assert approved_cpu <= limit.cpu_millis
    assert used.memory_mib <= limit.memory_mib and used.storage_gib <= limit.storage_gib
    assert used.namespaces <= limit.namespaces
    return approved_cpu


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_requests_beyond_the_budget_admit_only_what_fits():
    tenant = set_budget(TenantFactory(slug="payments"), cpu_millis=4000, namespaces=10)
    requester = MembershipFactory(tenant=tenant, user=UserFactory(username="dev")).user

    outcomes = submit_at_once(tenant, requester, ["1000m"] * THREADS)

    assert [o for o in outcomes if o[0] not in ("admitted", "refused")] == []
    admitted = [detail for outcome, detail in outcomes if outcome == "admitted"]
    refused = [detail for outcome, detail in outcomes if outcome == "refused"]
    assert (len(admitted), len(refused)) == (4, 6)
    for detail in refused:
        assert {field: [str(m) for m in messages] for field, messages in detail.items()} == {
            "cpu": [
                "Asks for 1 core of CPU, but payments has 4 of its budget of 4 cores "
                "of CPU taken: "
                "0 in use by its namespaces, 4 requested by requests not yet provisioned; "
                "0 left."
            ]
        }
    assert set(Request.objects.values_list("state", flat=True)) == {RequestState.APPROVED}
    assert assert_within_budget(tenant) == 4000


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_of_mixed_sizes_never_exceed_the_budget():
    tenant = set_budget(TenantFactory(slug="payments"), cpu_millis=4000, namespaces=10)
    requester = MembershipFactory(tenant=tenant, user=UserFactory(username="dev")).user
    sizes = ["1500m", "1000m", "500m"] * 3 + ["1500m"]  # 11 CPU asked of 4

    outcomes = submit_at_once(tenant, requester, sizes)

    assert [o for o in outcomes if o[0] not in ("admitted", "refused")] == []
    approved_cpu = assert_within_budget(tenant)
    left = 4000 - approved_cpu
    for (outcome, detail), size in zip(outcomes, sizes, strict=True):
        if outcome == "refused":
            millis = quantities.cpu_to_millis(size)
            assert set(detail) == {"cpu"}, detail
            asked = quantities.amount("cpu", millis).written()
            assert str(detail["cpu"][0]).startswith(
                f"Asks for {asked} of CPU, but payments has "
            ), detail
            # Admission is one at a time and usage only grew: it did not fit, and still does
            # not.
            assert millis > left
